import { Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { egressKindOf } from '@tally/capacity';
import { hlsSessionIdInPath } from '@tally/contracts';
import { type EgressSummary, LivekitEgressClient } from '@tally/livekit';
import type { Recording, RecordingEgress } from '@tally/db';
import { FinaliseQueue, PassthroughEgresses, partInPath, RecordingLifecycle, recordingIdInPath } from '@tally/recordings';
import { EgressStopRequests } from '@tally/runtime';
import type { RedisLoss } from '../reconcile/redis-loss.js';
import { HlsSessionsRepository } from './hls-sessions.repository.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';

/** A recording younger than this may not have its egress id stored yet: it is not judged. */
const SETTLE_MS = 60_000;
const RUNNING = new Set<EgressSummary['state']>(['starting', 'active']);
/** A passthrough egress still STARTING after this long is waiting for a keyframe that will not come. */
const STUCK_STARTING_MS = 20_000;

export type EgressReconcileReport = Readonly<{
  recordingsAdvanced: number;
  recordingsFailedVanished: number;
  ghostEgressesStopped: number;
  reservationsRestored: number;
  stuckEgressesReplaced: number;
}>;

/**
 * LiveKit drops webhooks, and egress can die without one: open recordings are compared with the
 * egresses LiveKit knows. Missed transitions are applied, recordings whose egress vanished fail
 * with that reason, egresses no open recording owns are stopped (one Tally asked to stop lately is
 * left to finish), and running egresses that lost their reservation get it back.
 */
@Injectable()
export class EgressReconciler {
  private readonly logger = new Logger(EgressReconciler.name);

  constructor(
    private readonly rows: RecordingRowsRepository,
    private readonly hlsSessions: HlsSessionsRepository,
    private readonly egress: LivekitEgressClient,
    private readonly lifecycle: RecordingLifecycle,
    private readonly finalise: FinaliseQueue,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
    private readonly passthrough: PassthroughEgresses,
    private readonly stops: EgressStopRequests,
  ) {}

  /**
   * `loss`: when Redis last lost its data. LiveKit lists an egress again only when its
   * state changes, so an egress asked for before then may run unlisted: its recording is neither
   * failed nor stripped of its reservation for that.
   */
  async run(now: Date, loss?: RedisLoss): Promise<EgressReconcileReport> {
    const forgottenBefore = loss?.lostAt;
    const egresses = await this.egress.list({ activeOnly: false });
    const byId = new Map(egresses.map((e) => [e.egressId, e]));
    const open = await this.rows.open();
    const report = {
      recordingsAdvanced: 0,
      recordingsFailedVanished: 0,
      ghostEgressesStopped: 0,
      reservationsRestored: 0,
      stuckEgressesReplaced: 0,
    };
    const stillOpen = new Set<string>();

    for (const recording of open) {
      const forgotten = forgottenBefore !== undefined && recording.createdAt < forgottenBefore;
      if (recording.mode === 'passthrough') {
        if (await this.reconcilePair(recording, recording.egresses, egresses, now, report, forgotten)) stillOpen.add(recording.id);
        continue;
      }
      // An egress whose id was never stored is found by the recording id its file path carries.
      const egress = recording.egressId
        ? byId.get(recording.egressId)
        : egresses.find((e) => recordingIdInPath(e.requestedPath) === recording.id);
      if (egress) {
        const after = await this.lifecycle.applyEgress(egress, now);
        if (after && after.status !== recording.status) report.recordingsAdvanced += 1;
        if (after && after.status !== 'complete' && after.status !== 'failed') stillOpen.add(recording.id);
        if (after?.status === 'active' && (await this.restore(recording))) report.reservationsRestored += 1;
      } else if (forgotten && recording.egressId && recording.status !== 'ending') {
        stillOpen.add(recording.id);
        if (await this.restore(recording)) report.reservationsRestored += 1;
      } else if (recording.status === 'ending') {
        // Egress finished with the file (LiveKit may have forgotten it since): the finaliser decides.
        await this.finalise.enqueue(recording.id);
      } else if (now.getTime() - recording.createdAt.getTime() > SETTLE_MS) {
        if (await this.lifecycle.fail(recording.id, 'egress vanished: LiveKit no longer knows it', now))
          report.recordingsFailedVanished += 1;
      }
    }

    const owned = new Set(
      open.flatMap((r) => (stillOpen.has(r.id) ? [r.egressId, ...r.egresses.map((e) => e.egressId)].filter((id) => id !== null) : [])),
    );
    const current = await this.rows.partsOf([...stillOpen]);
    for (const part of current) if (part.egressId) owned.add(part.egressId);
    // One Tally already asked to stop (the API's recording or HLS stop, a teardown, an earlier sweep:
    // the egress adapter notes every stop) is given time: asking again only waits another 10 s.
    const stopping = await this.stops.pending(egresses.filter((e) => RUNNING.has(e.state)).map((e) => e.egressId));
    for (const egress of egresses) {
      if (!RUNNING.has(egress.state) || owned.has(egress.egressId) || stopping.has(egress.egressId)) continue;
      // Live HLS egresses belong to the API's HLS sessions, which stop them themselves; one whose
      // session is no longer open (or never was a row) runs unreserved, and is stopped here.
      const hlsSessionId = hlsSessionIdInPath(egress.requestedPath);
      if (hlsSessionId && (await this.hlsSessionOpen(hlsSessionId))) continue;
      // A passthrough egress is claimed only by the attempt its recording still runs (a replaced one is a ghost).
      const part = partInPath(egress.requestedPath);
      const claimedBy = part ? undefined : recordingIdInPath(egress.requestedPath);
      if (claimedBy && stillOpen.has(claimedBy)) continue;
      if (
        part &&
        current.some((p) => p.recordingId === part.recordingId && p.track === part.track && p.attempt === part.attempt && !p.egressId)
      )
        continue;
      await this.egress.stop(egress.egressId).then(
        () => (report.ghostEgressesStopped += 1),
        (error: unknown) => this.logger.warn(`could not stop ghost egress ${egress.egressId}: ${String(error)}`),
      );
    }
    if (Object.values(report).some((n) => n > 0)) this.logger.log(`recordings repaired ${JSON.stringify(report)}`);
    return report;
  }

  /**
   * Both egresses of a passthrough recording: each one's missed transitions are applied, one stuck
   * STARTING is replaced, and the recording fails when LiveKit forgot an egress it still needed.
   * Returns whether the recording is still open.
   */
  private async reconcilePair(
    recording: Recording,
    parts: readonly RecordingEgress[],
    egresses: readonly EgressSummary[],
    now: Date,
    report: Record<keyof EgressReconcileReport, number>,
    forgotten: boolean,
  ): Promise<boolean> {
    let after: Recording | undefined = recording;
    const missing: string[] = [];
    for (const part of parts) {
      const egress = part.egressId
        ? egresses.find((e) => e.egressId === part.egressId)
        : egresses.find((e) => {
            const named = partInPath(e.requestedPath);
            return named?.recordingId === part.recordingId && named.track === part.track && named.attempt === part.attempt;
          });
      if (!egress) {
        // Asked for before Redis lost its data, it may run unlisted: not missing, and not replaced.
        if (forgotten && part.egressId) continue;
        if (!['complete', 'limit_reached'].includes(part.state)) missing.push(part.track);
        continue;
      }
      after = await this.lifecycle.applyEgress(egress, now);
      if (egress.state === 'starting' && now.getTime() - part.requestedAt.getTime() > STUCK_STARTING_MS && after?.status !== 'failed') {
        this.logger.warn(`recording ${recording.id}: ${part.track} egress ${egress.egressId} stuck starting; replacing it`);
        await this.passthrough.replace(part, egress.room, now).then(
          () => (report.stuckEgressesReplaced += 1),
          (error: unknown) => this.logger.warn(`could not replace ${part.track} egress of ${recording.id}: ${String(error)}`),
        );
      }
    }
    if (after && after.status !== recording.status) report.recordingsAdvanced += 1;
    await this.passthrough.stopSurvivor(after, now);
    const status = after?.status ?? recording.status;
    if (status === 'complete' || status === 'failed') return false;
    if (missing.length > 0 && status !== 'ending' && now.getTime() - recording.createdAt.getTime() > SETTLE_MS) {
      if (await this.lifecycle.fail(recording.id, `egress vanished: LiveKit no longer knows the ${missing.join(' and ')} egress`, now))
        report.recordingsFailedVanished += 1;
      return false;
    }
    if (status === 'ending' && missing.length > 0) {
      // Egress finished with these files and LiveKit has forgotten it since: the finaliser decides.
      await this.rows.markPartsLost(recording.id, missing as RecordingEgress['track'][]);
      await this.finalise.enqueue(recording.id);
    }
    if ((status === 'active' || (forgotten && status === 'starting')) && (await this.restore(recording))) report.reservationsRestored += 1;
    return true;
  }

  /** A running recording without a reservation gets it back on its node. True when restored. */
  private async restore(recording: Recording): Promise<boolean> {
    if (await this.ledger.held(recording.id)) return false;
    return this.admitter.restore(recording.id, recording.appId, egressKindOf(recording.mode), 1, { nodeId: recording.nodeId });
  }

  /** Read per egress, after the list: a session created meanwhile writes its row before it asks for its egress. */
  private async hlsSessionOpen(id: string): Promise<boolean> {
    return this.hlsSessions.isOpen(id);
  }
}
