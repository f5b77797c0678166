import { Injectable } from '@nestjs/common';
import { hlsSessionIdInPath } from '@tally/contracts';
import { type HlsSession, Prisma, PrismaService } from '@tally/db';
import { OPEN_HLS as OPEN } from '@tally/streams';

export type NewHlsSession = Readonly<{
  id: string;
  appId: string;
  streamId: string;
  mode: string;
  preset: string;
  segmentS: number;
  audio: boolean;
  nodeId: string;
  dir: string;
  publicId: string;
}>;

/** HLS session rows; reads are scoped by appId and streamId, the janitor's sweeps span every app. */
@Injectable()
export class HlsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Undefined when the stream already has an open session: a unique partial index allows one
   * starting or live session per stream, so concurrent starts cannot both write one.
   */
  async create(session: NewHlsSession): Promise<HlsSession | undefined> {
    try {
      return await this.prisma.hlsSession.create({ data: session });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return undefined;
      throw error;
    }
  }

  /** The stream's newest session whose segments still exist. */
  latest(appId: string, streamId: string): Promise<HlsSession | null> {
    return this.prisma.hlsSession.findFirst({ where: { appId, streamId, purgedAt: null }, orderBy: { createdAt: 'desc' } });
  }

  /** The session a public playlist path names, while its segments exist. */
  servable(publicId: string): Promise<HlsSession | null> {
    return this.prisma.hlsSession.findFirst({ where: { publicId, purgedAt: null } });
  }

  open(appId: string, streamId: string): Promise<HlsSession | null> {
    return this.prisma.hlsSession.findFirst({ where: { appId, streamId, status: { in: OPEN } } });
  }

  /** Open sessions whose stream has ended, with when it ended. */
  async openOfEndedStreams(): Promise<Readonly<{ session: HlsSession; endedAt: Date }>[]> {
    const open = await this.prisma.hlsSession.findMany({ where: { status: { in: OPEN } }, take: 500 });
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

  /** The session an egress writes for, named by the playlist path it was asked to write (its id may not be stored yet). */
  async ofEgressPath(requestedPath: string | undefined): Promise<HlsSession | null> {
    const id = hlsSessionIdInPath(requestedPath);
    return id ? this.prisma.hlsSession.findUnique({ where: { id } }) : null;
  }

  starting(): Promise<HlsSession[]> {
    return this.prisma.hlsSession.findMany({ where: { status: 'starting' }, take: 100 });
  }

  due(now: Date): Promise<HlsSession[]> {
    return this.prisma.hlsSession.findMany({ where: { purgeAt: { lte: now }, purgedAt: null }, take: 100 });
  }
}
