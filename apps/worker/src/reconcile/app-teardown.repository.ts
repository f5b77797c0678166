import { Injectable } from '@nestjs/common';
import { type HlsSession, type Ingress, PrismaService, type Recording, type Stream } from '@tally/db';

export type DeletedApp = Readonly<{ id: string; deletedAt: Date }>;

/** What a deleted app still runs: every row whose work may still hold capacity or a LiveKit resource. */
export type AppLeftovers = Readonly<{
  streams: Stream[];
  recordings: Recording[];
  ladders: Recording[];
  hls: HlsSession[];
  ingresses: Ingress[];
  cameraIds: string[];
}>;

/** The rows of deleted apps, for the worker that tears them down and finally purges them. */
@Injectable()
export class AppTeardownRepository {
  constructor(private readonly prisma: PrismaService) {}

  deletedApps(): Promise<DeletedApp[]> {
    return this.prisma.app.findMany({ where: { deletedAt: { not: null } }, select: { id: true, deletedAt: true } }) as Promise<
      DeletedApp[]
    >;
  }

  async leftovers(appId: string): Promise<AppLeftovers> {
    const [streams, recordings, ladders, hls, ingresses, cameras] = await Promise.all([
      this.prisma.stream.findMany({ where: { appId, status: { not: 'ended' } } }),
      this.prisma.recording.findMany({ where: { appId, status: { in: ['starting', 'active', 'ending'] } } }),
      this.prisma.recording.findMany({ where: { appId, ladderStatus: { in: ['queued', 'running'] } } }),
      this.prisma.hlsSession.findMany({ where: { appId, status: { in: ['starting', 'live'] } } }),
      this.prisma.ingress.findMany({ where: { appId, deletedAt: null } }),
      this.prisma.camera.findMany({ where: { appId, deletedAt: null }, select: { id: true } }),
    ]);
    return { streams, recordings, ladders, hls, ingresses, cameraIds: cameras.map((c) => c.id) };
  }

  async failLadder(recordingId: string): Promise<void> {
    await this.prisma.recording.updateMany({
      where: { id: recordingId, ladderStatus: { in: ['queued', 'running'] } },
      data: { ladderStatus: 'failed', ladderError: 'the app was deleted' },
    });
  }

  /** The app's rows go with it (every child row cascades); only called once nothing of it runs. */
  async purge(appId: string): Promise<void> {
    await this.prisma.app.deleteMany({ where: { id: appId, deletedAt: { not: null } } });
  }
}
