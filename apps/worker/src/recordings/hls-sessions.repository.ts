import { Injectable } from '@nestjs/common';
import { type HlsSession, PrismaService } from '@tally/db';
import { OPEN_HLS } from '@tally/streams';

/** The HLS session rows the worker's sweeps read (every app's); transitions go through HlsLifecycle. */
@Injectable()
export class HlsSessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  open(): Promise<HlsSession[]> {
    return this.prisma.hlsSession.findMany({ where: { status: { in: OPEN_HLS } } });
  }

  /** Open sessions whose stream has ended, with when it ended. */
  async openOfEndedStreams(): Promise<Readonly<{ session: HlsSession; endedAt: Date }>[]> {
    const open = await this.prisma.hlsSession.findMany({ where: { status: { in: OPEN_HLS } }, take: 500 });
    if (open.length === 0) return [];
    const ended = await this.prisma.stream.findMany({
      where: { id: { in: open.map((s) => s.streamId) }, status: 'ended' },
      select: { id: true, endedAt: true },
    });
    const endedAt = new Map(ended.map((s) => [s.id, s.endedAt ?? new Date(0)]));
    return open.flatMap((session) => {
      const at = endedAt.get(session.streamId);
      return at ? [{ session, endedAt: at }] : [];
    });
  }

  starting(): Promise<HlsSession[]> {
    return this.prisma.hlsSession.findMany({ where: { status: 'starting' }, take: 100 });
  }

  /** Stopped sessions whose retention has passed and whose segments still exist. */
  due(now: Date): Promise<HlsSession[]> {
    return this.prisma.hlsSession.findMany({ where: { purgeAt: { lte: now }, purgedAt: null }, take: 100 });
  }

  async isOpen(id: string): Promise<boolean> {
    const session = await this.prisma.hlsSession.findUnique({ where: { id }, select: { status: true } });
    return session !== null && OPEN_HLS.includes(session.status);
  }
}
