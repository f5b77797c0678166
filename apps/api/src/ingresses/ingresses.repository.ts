import { Injectable } from '@nestjs/common';
import type { IngressListQuery } from '@tally/contracts';
import { type Ingress, type IngressKind, PrismaService } from '@tally/db';

export type NewIngress = Readonly<{
  id: string;
  appId: string;
  streamId: string;
  kind: IngressKind;
  transcode: boolean;
  livekitIngressId: string;
  url: string;
  streamKeyHash: string;
  nodeId: string;
}>;

/** Ingress rows; every read by id is scoped by appId (webhooks find theirs by LiveKit's id). */
@Injectable()
export class IngressesRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(ingress: NewIngress): Promise<Ingress> {
    return this.prisma.ingress.create({ data: ingress });
  }

  find(appId: string, id: string): Promise<Ingress | null> {
    return this.prisma.ingress.findFirst({ where: { id, appId } });
  }

  findByLivekitId(livekitIngressId: string): Promise<Ingress | null> {
    return this.prisma.ingress.findUnique({ where: { livekitIngressId } });
  }

  list(appId: string, query: IngressListQuery): Promise<Ingress[]> {
    return this.prisma.ingress.findMany({
      where: { appId, ...(query.status ? { status: query.status } : {}), ...(query.streamId ? { streamId: query.streamId } : {}) },
      orderBy: { createdAt: 'desc' },
      take: 500,
    });
  }
}
