import type { CapacityLedger } from '@tally/admission';
import type { RecordingEndReason, WebhookEventType } from '@tally/contracts';
import type { Prisma, PrismaClient, Recording, RecordingEgress, RecordingStatus } from '@tally/db';
import type { EgressSummary } from '@tally/livekit';
import type { WebhookOutbox } from '@tally/webhooks';
import type { FinaliseQueue } from './finalise.queue.js';
import { judgeParts, partInPath } from './passthrough.js';
import { locationWritten } from './recording-files.js';
import { toRecordingView } from './recording.view.js';

const OPEN: RecordingStatus[] = ['starting', 'active', 'ending'];
const EGRESS_ORDER: Readonly<Record<string, number>> = {
  starting: 0,
  active: 1,
  ending: 2,
  complete: 3,
  limit_reached: 3,
  failed: 3,
  aborted: 3,
};

/** What the finaliser learnt about a finished file. */
export type FinishedFile = Readonly<{
  location: string;
  sizeBytes: number;
  durationS: number;
  sha256: string | null;
  codecs: ReadonlyArray<Readonly<{ type: 'video' | 'audio'; codec: string }>> | null;
}>;

/**
 * The recording state machine, shared by the API (LiveKit webhooks) and the worker (sweeps,
 * finalisation). Every transition is a conditional update, so a webhook and a sweep racing on the
 * same egress apply it once; the row and its app event are written in one transaction (the event
 * is delivered after commit), and capacity is given back only after the row says so.
 */
export class RecordingLifecycle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly ledger: CapacityLedger,
    private readonly outbox: WebhookOutbox,
    private readonly finalise: FinaliseQueue,
  ) {}

  /** Applies LiveKit's view of an egress to its recording; undefined when no recording has that egress. */
  async applyEgress(egress: EgressSummary, now: Date): Promise<Recording | undefined> {
    const part = await this.findPart(egress);
    if (part) return this.applyPart(part, egress, now);
    if (partInPath(egress.requestedPath)) return undefined;
    const recording = await this.findByEgress(egress);
    if (!recording) return undefined;
    switch (egress.state) {
      case 'starting':
        return recording;
      case 'active':
        await this.markActive(recording, fileStart(egress) ?? now);
        return this.reload(recording.id);
      case 'ending':
        await this.transition(recording.id, ['starting', 'active'], { status: 'ending' });
        return this.reload(recording.id);
      case 'complete':
      case 'limit_reached':
        await this.markActive(recording, fileStart(egress) ?? now);
        await this.markFinished(recording, egress, now);
        return this.reload(recording.id);
      case 'failed':
      case 'aborted':
        await this.fail(recording.id, egress.error ?? `egress ${egress.state}`, now);
        return this.reload(recording.id);
    }
  }

  /**
   * By egress id, or, when LiveKit reports the egress before its id was stored (the webhook can beat
   * the start call's reply), by the recording id its requested file path carries; the id is stored then.
   */
  private async findByEgress(egress: EgressSummary): Promise<Recording | undefined> {
    const known = await this.prisma.recording.findUnique({ where: { egressId: egress.egressId } });
    if (known) return known;
    const recordingId = recordingIdInPath(egress.requestedPath);
    if (!recordingId) return undefined;
    const { count } = await this.prisma.recording.updateMany({
      where: { id: recordingId, egressId: null },
      data: { egressId: egress.egressId },
    });
    return count === 1 ? this.reload(recordingId) : undefined;
  }

  /** A passthrough egress by its id, or by the recording and track its file path names (its id is stored then). */
  private async findPart(egress: EgressSummary): Promise<RecordingEgress | undefined> {
    const known = await this.prisma.recordingEgress.findUnique({ where: { egressId: egress.egressId } });
    if (known) return known;
    const named = partInPath(egress.requestedPath);
    if (!named) return undefined;
    const { count } = await this.prisma.recordingEgress.updateMany({
      where: { recordingId: named.recordingId, track: named.track, attempt: named.attempt, egressId: null },
      data: { egressId: egress.egressId },
    });
    return count === 1
      ? ((await this.prisma.recordingEgress.findUnique({ where: { egressId: egress.egressId } })) ?? undefined)
      : undefined;
  }

  /**
   * Records what LiveKit says of one of a passthrough recording's egresses, then moves the recording
   * by what both say together (judgeParts): one id, one status, one stream of app events.
   */
  private async applyPart(part: RecordingEgress, egress: EgressSummary, now: Date): Promise<Recording | undefined> {
    // A start call's reply (STARTING) may arrive after the webhook that said ACTIVE: states only move on.
    const state = (EGRESS_ORDER[egress.state] ?? 0) >= (EGRESS_ORDER[part.state] ?? 0) ? egress.state : part.state;
    await this.prisma.recordingEgress.updateMany({
      where: { egressId: egress.egressId },
      data: {
        state,
        startedAt: egress.startedAt ?? part.startedAt,
        mediaStartedAt: egress.file?.mediaStartedAt ?? part.mediaStartedAt,
        endedAt: egress.endedAt ?? part.endedAt,
        error: egress.error ?? part.error,
        location: egress.file ? locationWritten(part.location, egress.file.location) : part.location,
      },
    });
    const parts = await this.prisma.recordingEgress.findMany({ where: { recordingId: part.recordingId } });
    const recording = await this.reload(part.recordingId);
    if (!recording) return undefined;
    const verdict = judgeParts(
      parts.map((p) => ({ ...p, state: p.state as EgressSummary['state'] })),
      now,
    );
    switch (verdict.kind) {
      case 'starting':
        break;
      case 'failed':
        await this.fail(recording.id, verdict.reason, now);
        break;
      case 'cut':
        // The surviving egress is stopped by whoever applied this (webhook receiver, sweep); the
        // recording finishes once it has closed its file.
        await this.markActive(recording, verdict.startedAt);
        await this.transition(recording.id, ['active'], { status: 'ending', error: verdict.reason, endedAt: verdict.endedAt });
        if (verdict.othersDone) {
          await this.ledger.release(recording.id);
          if ((await this.reload(recording.id))?.status === 'ending') await this.finalise.enqueue(recording.id);
        }
        break;
      case 'active':
        await this.markActive(recording, verdict.startedAt);
        break;
      case 'ending':
        await this.markActive(recording, verdict.startedAt);
        await this.transition(recording.id, ['active'], { status: 'ending' });
        break;
      case 'finished':
        await this.markActive(recording, verdict.startedAt);
        {
          // A stop asked through the API is the recording's end (stopRequested stored it).
          const endedAt = recording.endedAt ?? verdict.endedAt;
          await this.transition(recording.id, ['active', 'ending'], {
            status: 'ending',
            endedAt,
            durationS: (endedAt.getTime() - verdict.startedAt.getTime()) / 1000,
          });
        }
        await this.ledger.release(recording.id);
        if ((await this.reload(recording.id))?.status === 'ending') await this.finalise.enqueue(recording.id);
        break;
    }
    return this.reload(recording.id);
  }

  /** A stop asked of a passthrough recording: its end, where the joined file will be cut. */
  async stopRequested(recordingId: string, now: Date): Promise<void> {
    await this.prisma.recording.updateMany({
      where: { id: recordingId, status: { in: ['starting', 'active'] }, endedAt: null },
      data: { endedAt: now },
    });
  }

  /**
   * Notes why Tally is about to stop an open recording on its own; true when this call noted it (the
   * first reason stays). Written before the stop is asked, so a process that dies in between leaves
   * a recording whose reason tells the next check to stop it.
   */
  async noteEndReason(recordingId: string, reason: RecordingEndReason): Promise<boolean> {
    const { count } = await this.prisma.recording.updateMany({
      where: { id: recordingId, status: { in: ['starting', 'active'] }, endReason: null },
      data: { endReason: reason },
    });
    return count === 1;
  }

  /** Marks an open recording failed with the reason, tells the app, and frees its capacity. */
  async fail(recordingId: string, reason: string, now: Date): Promise<boolean> {
    const failed = await this.transition(recordingId, OPEN, { status: 'failed', error: reason, endedAt: now }, 'recording.failed');
    await this.ledger.release(recordingId);
    return failed;
  }

  /** The finaliser's verdict: the file is in place and checked. */
  async complete(recordingId: string, file: FinishedFile): Promise<boolean> {
    // Nothing asked for the end (the stream or the egress ended on its own): an ordinary stop.
    await this.prisma.recording.updateMany({
      where: { id: recordingId, status: 'ending', endReason: null },
      data: { endReason: 'stopped' },
    });
    return this.transition(
      recordingId,
      ['ending'],
      {
        status: 'complete',
        location: file.location,
        sizeBytes: BigInt(file.sizeBytes),
        durationS: file.durationS,
        sha256: file.sha256,
        codecs: file.codecs === null ? undefined : file.codecs,
      },
      'recording.completed',
    );
  }

  private async markActive(recording: Recording, startedAt: Date): Promise<void> {
    await this.transition(recording.id, ['starting'], { status: 'active', startedAt }, 'recording.started');
    await this.ledger.confirm(recording.id);
  }

  /** The egress is done with the file: capacity goes back now, the file is checked by the finaliser. */
  private async markFinished(recording: Recording, egress: EgressSummary, now: Date): Promise<void> {
    const facts =
      egress.file === undefined
        ? {}
        : {
            durationS: egress.file.durationS,
            sizeBytes: BigInt(Math.max(0, Math.round(egress.file.sizeBytes))),
            location: locationWritten(recording.location, egress.file.location),
          };
    await this.transition(recording.id, ['active', 'ending'], { status: 'ending', endedAt: egress.endedAt ?? now, ...facts });
    await this.ledger.release(recording.id);
    const current = await this.reload(recording.id);
    if (current?.status === 'ending') await this.finalise.enqueue(recording.id);
  }

  /** Moves the row from one of `from` to the new state; stages the app's event in the same transaction. */
  private async transition(
    recordingId: string,
    from: RecordingStatus[],
    data: Prisma.RecordingUpdateManyMutationInput,
    event?: WebhookEventType,
  ): Promise<boolean> {
    const staged = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.recording.updateMany({ where: { id: recordingId, status: { in: from } }, data });
      if (count === 0) return { moved: false, staged: undefined };
      if (!event) return { moved: true, staged: undefined };
      const row = await tx.recording.findUniqueOrThrow({ where: { id: recordingId } });
      return { moved: true, staged: await this.outbox.stage(tx, row.appId, event, toRecordingView(row)) };
    });
    if (staged.staged) await this.outbox.flush([staged.staged]);
    return staged.moved;
  }

  private async reload(recordingId: string): Promise<Recording | undefined> {
    return (await this.prisma.recording.findUnique({ where: { id: recordingId } })) ?? undefined;
  }
}

/** Recording files and object keys end in `<recordingId>.<ext>`. */
export function recordingIdInPath(path: string | undefined): string | undefined {
  return path?.match(/(rec_[a-z0-9]{16})\.[a-z0-9]+$/)?.[1];
}

/**
 * When an egress's file begins: egress reads media while it builds its pipeline and reports its
 * own start once that is built, seconds later on a busy host; a recording starts where its file does.
 */
function fileStart(egress: EgressSummary): Date | undefined {
  return egress.file?.mediaStartedAt ?? egress.startedAt;
}
