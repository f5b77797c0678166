import { Injectable } from '@nestjs/common';
import { type Ingress, PrismaService } from '@tally/db';

/** The ingress rows reconciliation reads (every app's); transitions go through IngressLifecycle. */
@Injectable()
export class IngressesRepository {
  constructor(private readonly prisma: PrismaService) {}

  open(): Promise<Ingress[]> {
    return this.prisma.ingress.findMany({ where: { deletedAt: null, status: { not: 'ended' } } });
  }

  /** Re-read: a row written after the first read (its creation finished meanwhile) owns its ingress. */
  async isOpen(livekitIngressId: string): Promise<boolean> {
    const row = await this.prisma.ingress.findUnique({ where: { livekitIngressId }, select: { status: true, deletedAt: true } });
    return row !== null && row.deletedAt === null && row.status !== 'ended';
  }
}
