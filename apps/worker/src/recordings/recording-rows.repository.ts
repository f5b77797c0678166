import { Injectable } from '@nestjs/common';
import { type App, PrismaService, type Recording, type RecordingEgress } from '@tally/db';

/** A recording that may still be written (its egress runs or its file is being finished). */
const OPEN = ['starting', 'active', 'ending'] as const;

export type RecordingWithEgresses = Recording & { egresses: RecordingEgress[] };
export type OpenOnNode = Pick<Recording, 'id' | 'mode'> & { egresses: Pick<RecordingEgress, 'egressId' | 'state'>[] };
export type RunningLadder = Readonly<Pick<Recording, 'id' | 'appId' | 'ladderEncoder' | 'ladderNodeId'>>;

/**
 * The recording rows the worker reads across every app (finalisation, upload, reconciliation);
 * status transitions go through RecordingLifecycle in libs/recordings.
 */
@Injectable()
export class RecordingRowsRepository {
  constructor(private readonly prisma: PrismaService) {}

  get(id: string): Promise<Recording | null> {
    return this.prisma.recording.findUnique({ where: { id } });
  }

  withApp(id: string): Promise<(Recording & { app: App }) | null> {
    return this.prisma.recording.findUnique({ where: { id }, include: { app: true } });
  }

  app(appId: string): Promise<App | null> {
    return this.prisma.app.findUnique({ where: { id: appId } });
  }

  /** A passthrough recording's per-track egresses. */
  parts(recordingId: string): Promise<RecordingEgress[]> {
    return this.prisma.recordingEgress.findMany({ where: { recordingId } });
  }

  partsOf(recordingIds: readonly string[]): Promise<RecordingEgress[]> {
    return this.prisma.recordingEgress.findMany({ where: { recordingId: { in: [...recordingIds] } } });
  }

  /** Tracks whose egress LiveKit has forgotten after it finished: the finaliser works with what they left. */
  async markPartsLost(recordingId: string, tracks: readonly RecordingEgress['track'][]): Promise<void> {
    await this.prisma.recordingEgress.updateMany({ where: { recordingId, track: { in: [...tracks] } }, data: { state: 'lost' } });
  }

  open(): Promise<RecordingWithEgresses[]> {
    return this.prisma.recording.findMany({ where: { status: { in: [...OPEN] } }, include: { egresses: true } });
  }

  openCreatedBefore(before: Date): Promise<Pick<Recording, 'id' | 'nodeId'>[]> {
    return this.prisma.recording.findMany({
      where: { status: { in: [...OPEN] }, createdAt: { lt: before } },
      select: { id: true, nodeId: true },
    });
  }

  /** Open recordings placed on a node at or before `at`. */
  /** Open recordings placed on the node by `at`, with the egresses of passthrough ones. */
  openOnNode(nodeId: string, at: Date): Promise<OpenOnNode[]> {
    return this.prisma.recording.findMany({
      where: { nodeId, status: { in: [...OPEN] }, createdAt: { lte: at } },
      select: { id: true, mode: true, egresses: { select: { egressId: true, state: true } } },
    });
  }

  runningLadders(): Promise<RunningLadder[]> {
    return this.prisma.recording.findMany({
      where: { ladderStatus: 'running' },
      select: { id: true, appId: true, ladderEncoder: true, ladderNodeId: true },
    });
  }

  /** Complete recordings still on local storage, oldest first. */
  localComplete(limit: number): Promise<Pick<Recording, 'id'>[]> {
    return this.prisma.recording.findMany({
      where: { status: 'complete', storage: 'local' },
      select: { id: true },
      orderBy: { endedAt: 'asc' },
      take: limit,
    });
  }

  async recordUploadError(id: string, reason: string): Promise<void> {
    await this.prisma.recording.updateMany({ where: { id, storage: 'local' }, data: { uploadError: reason } });
  }

  /** Points a complete local recording at its object. False when it changed meanwhile (deleted). */
  async markUploaded(id: string): Promise<boolean> {
    const moved = await this.prisma.recording.updateMany({
      where: { id, status: 'complete', storage: 'local' },
      data: { storage: 's3', uploadError: null },
    });
    return moved.count > 0;
  }
}
