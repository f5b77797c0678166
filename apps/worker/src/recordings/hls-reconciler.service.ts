import { Injectable, Logger } from '@nestjs/common';
import { hlsSessionIdInPath } from '@tally/contracts';
import { type EgressSummary, LivekitEgressClient } from '@tally/livekit';
import { HlsLifecycle } from '@tally/streams';
import type { RedisLoss } from '../reconcile/redis-loss.js';
import { HlsSessionsRepository } from './hls-sessions.repository.js';

/** A session younger than this may still be between its row and its egress start call: it is not judged. */
const SETTLE_MS = 60_000;
const RUNNING = new Set<EgressSummary['state']>(['starting', 'active']);

export type HlsReconcileReport = Readonly<{
  egressesAdopted: number;
  sessionsFailedNoEgress: number;
  reservationsRestored: number;
}>;

/**
 * Open HLS sessions compared with the egresses LiveKit runs. The API writes the session row, then
 * asks LiveKit for the egress, then stores its id and confirms the reservation; a process killed
 * in between leaves a session that would stay `starting` forever, or an egress nobody stops. So an
 * egress found by the session id in its path is adopted, a session with no egress after the settle
 * time fails (its reservation released), and a session whose egress runs without a reservation
 * (Redis lost its data, or the lease lapsed) gets it back on its own node.
 */
@Injectable()
export class HlsReconciler {
  private readonly logger = new Logger(HlsReconciler.name);

  constructor(
    private readonly sessions: HlsSessionsRepository,
    private readonly lifecycle: HlsLifecycle,
    private readonly egress: LivekitEgressClient,
  ) {}

  /**
   * `loss`: when Redis last lost its data. LiveKit lists an egress again only when its
   * state changes, so the egress of a session created before then may run unlisted: the session
   * keeps its reservation (restored when lost) instead.
   */
  async run(now: Date, loss?: RedisLoss): Promise<HlsReconcileReport> {
    const forgottenBefore = loss?.lostAt;
    const report = { egressesAdopted: 0, sessionsFailedNoEgress: 0, reservationsRestored: 0 };
    // Rows first: a session created after this read is not judged, and its egress is listed after its row.
    const open = await this.sessions.open();
    if (open.length === 0) return report;
    const egresses = await this.egress.list({ activeOnly: false });
    for (const session of open) {
      const egress = session.egressId
        ? egresses.find((e) => e.egressId === session.egressId)
        : egresses.find((e) => hlsSessionIdInPath(e.requestedPath) === session.id);
      if (egress && !session.egressId && (await this.lifecycle.adoptEgress(session.id, egress.egressId))) report.egressesAdopted += 1;
      const forgotten = !egress && session.egressId !== null && forgottenBefore !== undefined && session.createdAt < forgottenBefore;
      if ((egress && RUNNING.has(egress.state)) || forgotten) {
        if (await this.lifecycle.keepReserved(session)) report.reservationsRestored += 1;
      } else if (!egress && !session.egressId && now.getTime() - session.createdAt.getTime() > SETTLE_MS) {
        const error = 'egress was never started (the API stopped before asking LiveKit)';
        if (await this.lifecycle.fail(session, error, now, true)) report.sessionsFailedNoEgress += 1;
      }
    }
    if (Object.values(report).some((n) => n > 0)) this.logger.log(`HLS repaired ${JSON.stringify(report)}`);
    return report;
  }
}
