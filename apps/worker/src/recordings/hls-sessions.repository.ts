import { Injectable } from '@nestjs/common';
import { type HlsSession, PrismaService } from '@tally/db';
import { OPEN_HLS } from '@tally/streams';

/** The HLS session rows reconciliation reads (every app's); transitions go through HlsLifecycle. */
@Injectable()
export class HlsSessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  open(): Promise<HlsSession[]> {
    return this.prisma.hlsSession.findMany({ where: { status: { in: OPEN_HLS } } });
  }

  async isOpen(id: string): Promise<boolean> {
    const session = await this.prisma.hlsSession.findUnique({ where: { id }, select: { status: true } });
    return session !== null && OPEN_HLS.includes(session.status);
  }
}
