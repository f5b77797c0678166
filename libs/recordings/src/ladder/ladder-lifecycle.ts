import type { Admitter, CapacityLedger } from '@tally/admission';
import { explainRefusal, type Refusal, type WorkloadKind } from '@tally/capacity';
import type { LadderEncoder, LadderReport, WebhookEventType } from '@tally/contracts';
import type { LadderStatus, Prisma, PrismaClient, Recording } from '@tally/db';
import type { UsageIntervals } from '@tally/metering';
import type { WebhookOutbox } from '@tally/webhooks';
import { toRecordingView } from '../recording.view.js';
import type { LadderQueue } from './ladder.queue.js';

/** The agent has this long to take a queued ladder before its reservation lapses; it confirms it on start. */
const DISPATCH_LAPSE_MS = 10 * 60_000;

const KIND_OF: Readonly<Record<LadderEncoder, WorkloadKind>> = { nvenc: 'transcode.nvenc', x264: 'transcode.cpu' };
/** Free NVENC sessions first; the CPU takes what the GPUs cannot. */
const PREFERENCE: readonly LadderEncoder[] = ['nvenc', 'x264'];
const OPEN: LadderStatus[] = ['queued', 'running'];

export type LadderRequest =
  | Readonly<{ ok: true; recording: Recording }>
  | Readonly<{ ok: false; reason: 'not_complete' | 'no_video' | 'local_only'; message: string }>
  | Readonly<{ ok: false; reason: 'refused'; refusal: Refusal }>;

/** A ladder's reservation: one per recording at a time. */
export function ladderReservationId(recordingId: string): string {
  return `${recordingId}.ladder`;
}

/**
 * The ladder state machine, shared by the API (on request) and the worker (on completion, and the
 * agents' reports). Each dispatch is admitted first (NVENC preferred, CPU as fallback), then queued
 * to the chosen node's agent; a failed NVENC run is dispatched again on the CPU. The reservation is
 * confirmed when the agent starts and released when the run ends either way.
 */
export class LadderLifecycle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly outbox: WebhookOutbox,
    private readonly queue: LadderQueue,
    private readonly usage: UsageIntervals,
  ) {}

  /** Starts a ladder for a complete recording, unless one is queued, running or ready (then it is returned as is). */
  async request(recording: Recording): Promise<LadderRequest> {
    if (recording.status !== 'complete') {
      return { ok: false, reason: 'not_complete', message: `the recording is ${recording.status}; a ladder is made once it is complete` };
    }
    if (recording.storage !== 'local') return { ok: false, reason: 'local_only', message: 'ladders are made from local recordings only' };
    const codecs = Array.isArray(recording.codecs) ? (recording.codecs as { type?: unknown }[]) : [];
    if (!codecs.some((c) => c.type === 'video')) return { ok: false, reason: 'no_video', message: 'the recording has no video' };
    if (recording.ladderStatus !== null && recording.ladderStatus !== 'failed') return { ok: true, recording };
    const outcome = await this.dispatch(recording, PREFERENCE, [null, 'failed']);
    return outcome.ok
      ? { ok: true, recording: await this.reload(recording.id) }
      : { ok: false, reason: 'refused', refusal: outcome.refusal };
  }

  /** Applies an agent's report; reports of an older attempt than the row's, or from another node than the ladder's, are ignored. */
  async apply(report: LadderReport): Promise<void> {
    const recording = await this.prisma.recording.findUnique({ where: { id: report.recordingId } });
    // A report from another node than the one running the ladder changes nothing.
    if (!recording || recording.ladderAttempt !== report.attempt || (recording.ladderNodeId ?? '') !== report.nodeId) return;
    await this.meter(recording, report);
    switch (report.outcome) {
      case 'started':
        await this.transition(recording, ['queued'], { ladderStatus: 'running' });
        await this.ledger.confirm(ladderReservationId(recording.id));
        return;
      case 'ready': {
        const renditions = report.renditions.map(({ name, width, height, bitrateKbps }) => ({ name, width, height, bitrateKbps }));
        await this.transition(recording, OPEN, { ladderStatus: 'ready', ladderRenditions: renditions }, 'recording.ladder_ready');
        await this.ledger.release(ladderReservationId(recording.id));
        return;
      }
      case 'failed':
        await this.ledger.release(ladderReservationId(recording.id));
        if (recording.ladderEncoder === 'nvenc' && OPEN.includes(recording.ladderStatus ?? 'failed')) {
          const retried = await this.dispatch(recording, ['x264'], OPEN);
          if (retried.ok) return;
          await this.fail(recording, `${report.error}; the CPU fallback was refused: ${explainRefusal(retried.refusal)}`);
          return;
        }
        await this.fail(recording, report.error);
    }
  }

  /**
   * Open ladders whose run cannot end on its own are treated as a failed run on their node (a GPU
   * run then goes to the CPU): the node left the pool, or its agent never took the job before the
   * reservation lapsed. Returns how many were failed over.
   */
  async sweep(liveNodeIds: ReadonlySet<string>): Promise<number> {
    const open = await this.prisma.recording.findMany({ where: { ladderStatus: { in: OPEN } } });
    let repaired = 0;
    for (const recording of open) {
      const nodeId = recording.ladderNodeId ?? '';
      const gone = !liveNodeIds.has(nodeId);
      const untaken = recording.ladderStatus === 'queued' && !(await this.ledger.held(ladderReservationId(recording.id)));
      if (!gone && !untaken) continue;
      const error = gone ? `node ${nodeId} left the pool` : `no agent on node ${nodeId} took the ladder`;
      await this.apply({ outcome: 'failed', recordingId: recording.id, attempt: recording.ladderAttempt, nodeId, error });
      repaired += 1;
    }
    return repaired;
  }

  /**
   * Asks for a ladder on the app's behalf (its `transcodeLadder` setting, when a recording completes):
   * a refusal cannot be answered with a 429, so the ladder is marked failed with the reason.
   */
  async requestForApp(recording: Recording): Promise<LadderRequest> {
    const outcome = await this.request(recording);
    if (!outcome.ok && outcome.reason === 'refused') {
      await this.transition(
        recording,
        [null],
        { ladderStatus: 'failed', ladderError: `refused: ${explainRefusal(outcome.refusal)}` },
        'recording.ladder_failed',
      );
    }
    return outcome;
  }

  /**
   * Ladder minutes: one interval per attempt, from the agent's start to its end (its own clock). A
   * report without times (a failure declared for a node that left) ends the run now. Idempotent, so
   * a repeated or reordered report changes nothing.
   */
  private async meter(recording: Recording, report: LadderReport): Promise<void> {
    const now = new Date();
    const startedAt = report.startedAt ? new Date(report.startedAt) : report.outcome === 'started' ? now : undefined;
    const endedAt = report.outcome === 'started' ? undefined : report.endedAt ? new Date(report.endedAt) : now;
    const hardware = recording.ladderEncoder === 'nvenc' ? 'gpu' : 'cpu';
    await this.usage.ladder(
      { appId: recording.appId, recordingId: recording.id, attempt: report.attempt, hardware, startedAt, endedAt },
      now,
    );
  }

  /** Marks an open ladder failed and tells the app. */
  private async fail(recording: Recording, error: string): Promise<void> {
    await this.transition(recording, OPEN, { ladderStatus: 'failed', ladderError: error }, 'recording.ladder_failed');
  }

  /**
   * Admits the first encoder that fits, moves the row to `queued` for a new attempt (only from
   * `from`, so two callers dispatch once), and queues the run on the admitted node.
   */
  private async dispatch(
    recording: Recording,
    encoders: readonly LadderEncoder[],
    from: (LadderStatus | null)[],
  ): Promise<Readonly<{ ok: true }> | Readonly<{ ok: false; refusal: Refusal }>> {
    const reservation = ladderReservationId(recording.id);
    let refusal: Refusal | undefined;
    for (const encoder of encoders) {
      const admitted = await this.admitter.admit(reservation, recording.appId, KIND_OF[encoder], 1, DISPATCH_LAPSE_MS);
      if (!admitted.ok) {
        refusal = admitted.refusal;
        continue;
      }
      const attempt = recording.ladderAttempt + 1;
      const { count } = await this.prisma.recording.updateMany({
        where: { id: recording.id, ladderAttempt: recording.ladderAttempt, OR: from.map((s) => ({ ladderStatus: s })) },
        data: {
          ladderStatus: 'queued',
          ladderEncoder: encoder,
          ladderNodeId: admitted.nodeId,
          ladderAttempt: attempt,
          ladderError: null,
        },
      });
      // Another caller dispatched first: the reservation id is the same, so the one held is theirs.
      if (count === 0) return { ok: true };
      await this.queue.dispatch(admitted.nodeId, {
        recordingId: recording.id,
        appId: recording.appId,
        attempt,
        encoder,
        source: recording.location,
        ladderDir: ladderDirOf(recording.location),
      });
      return { ok: true };
    }
    if (!refusal) throw new Error('no encoder to admit');
    return { ok: false, refusal };
  }

  private async transition(
    recording: Recording,
    from: (LadderStatus | null)[],
    data: Prisma.RecordingUpdateManyMutationInput,
    event?: WebhookEventType,
  ): Promise<boolean> {
    const staged = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.recording.updateMany({
        where: { id: recording.id, ladderAttempt: recording.ladderAttempt, OR: from.map((s) => ({ ladderStatus: s })) },
        data,
      });
      if (count === 0 || !event) return { moved: count === 1, staged: undefined };
      const row = await tx.recording.findUniqueOrThrow({ where: { id: recording.id } });
      return { moved: true, staged: await this.outbox.stage(tx, row.appId, event, toRecordingView(row)) };
    });
    if (staged.staged) await this.outbox.flush([staged.staged]);
    return staged.moved;
  }

  private async reload(recordingId: string): Promise<Recording> {
    return this.prisma.recording.findUniqueOrThrow({ where: { id: recordingId } });
  }
}

/** A ladder lives next to its recording: `<appId>/<recordingId>.ladder/` under the recordings directory. */
export function ladderDirOf(location: string): string {
  return `${location.replace(/\.[a-z0-9]+$/, '')}.ladder`;
}
