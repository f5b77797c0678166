import { Injectable } from '@nestjs/common';
import type { IngressListQuery, IngressRefusedData } from '@tally/contracts';
import { type Ingress, type IngressKind, type IngressStatus, type Prisma, PrismaService } from '@tally/db';
import { WebhookOutbox } from '@tally/webhooks';
import { toIngressView } from './ingress.view.js';

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
  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: WebhookOutbox,
  ) {}

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

  /** Moves the row from one of `from` to the new state; false when it was in none of them (another writer won). */
  async transition(id: string, from: IngressStatus[], data: Prisma.IngressUpdateManyMutationInput): Promise<boolean> {
    const { count } = await this.prisma.ingress.updateMany({ where: { id, status: { in: from } }, data });
    return count === 1;
  }

  /** publishing → error with the refusal, and its ingress.refused event staged in the same transaction. */
  async markRefused(id: string, error: string, refusal: IngressRefusedData['refusal']): Promise<boolean> {
    const staged = await this.prisma.$transaction(async (tx) => {
      const [ingress] = await tx.ingress.updateManyAndReturn({ where: { id, status: 'publishing' }, data: { status: 'error', error } });
      if (!ingress) return { refused: false, event: undefined };
      return {
        refused: true,
        event: await this.outbox.stage(tx, ingress.appId, 'ingress.refused', { ingress: toIngressView(ingress), refusal }),
      };
    });
    await this.outbox.flush([staged.event]);
    return staged.refused;
  }
}
