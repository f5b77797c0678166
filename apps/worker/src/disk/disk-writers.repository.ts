import { Injectable } from '@nestjs/common';
import { type HlsSession, PrismaService, type Recording, type RecordingEgress } from '@tally/db';

export type OpenRecording = Recording & Readonly<{ egresses: RecordingEgress[] }>;

/** The rows of what writes media on the local filesystems: open local recordings and live HLS sessions. */
@Injectable()
export class DiskWritersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Recordings egress still writes or the finaliser has still to join and move (rows with `storage: s3` were written by an egress that uploaded them itself). */
  openRecordings(): Promise<OpenRecording[]> {
    return this.prisma.recording.findMany({
      where: { storage: 'local', status: { in: ['starting', 'active', 'ending'] } },
      include: { egresses: true },
    });
  }

  openHlsSessions(): Promise<HlsSession[]> {
    return this.prisma.hlsSession.findMany({ where: { status: { in: ['starting', 'live'] } } });
  }

  /** Stops a session (its egress is asked to stop by the caller); its files are kept for the usual retention. */
  async stopHls(id: string, at: Date, purgeAt: Date, reason: string): Promise<boolean> {
    const { count } = await this.prisma.hlsSession.updateMany({
      where: { id, status: { in: ['starting', 'live'] } },
      data: { status: 'stopped', stoppedAt: at, purgeAt, error: reason },
    });
    return count === 1;
  }
}
