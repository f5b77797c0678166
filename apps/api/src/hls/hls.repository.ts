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

/** HLS session rows; reads are scoped by appId and streamId (the worker's HLS sweep reads every app's). */
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

  /** The session an egress writes for, named by the playlist path it was asked to write (its id may not be stored yet). */
  async ofEgressPath(requestedPath: string | undefined): Promise<HlsSession | null> {
    const id = hlsSessionIdInPath(requestedPath);
    return id ? this.prisma.hlsSession.findUnique({ where: { id } }) : null;
  }
}
