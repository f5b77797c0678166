import { Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { egressKindOf, type EgressMode } from '@tally/capacity';
import { hlsSessionIdInPath } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { type EgressSummary, LivekitEgressClient } from '@tally/livekit';
import type { RedisLoss } from '../reconcile/redis-loss.js';

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
    private readonly prisma: PrismaService,
    private readonly egress: LivekitEgressClient,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
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
    const open = await this.prisma.hlsSession.findMany({ where: { status: { in: ['starting', 'live'] } } });
    if (open.length === 0) return report;
    const egresses = await this.egress.list({ activeOnly: false });
    for (const session of open) {
      const egress = session.egressId
        ? egresses.find((e) => e.egressId === session.egressId)
        : egresses.find((e) => hlsSessionIdInPath(e.requestedPath) === session.id);
      if (egress && !session.egressId) {
        await this.prisma.hlsSession.updateMany({ where: { id: session.id, egressId: null }, data: { egressId: egress.egressId } });
        report.egressesAdopted += 1;
      }
      const forgotten = !egress && session.egressId !== null && forgottenBefore !== undefined && session.createdAt < forgottenBefore;
      if ((egress && RUNNING.has(egress.state)) || forgotten) {
        if (await this.ledger.confirm(session.id)) continue;
        const kind = egressKindOf(session.mode as EgressMode);
        if (await this.admitter.restore(session.id, session.appId, kind, 1, { nodeId: session.nodeId, diskRole: 'hls' }))
          report.reservationsRestored += 1;
      } else if (!egress && !session.egressId && now.getTime() - session.createdAt.getTime() > SETTLE_MS) {
        const { count } = await this.prisma.hlsSession.updateMany({
          where: { id: session.id, status: 'starting', egressId: null },
          data: {
            status: 'failed',
            error: 'egress was never started (the API stopped before asking LiveKit)',
            stoppedAt: now,
            purgeAt: now,
          },
        });
        await this.ledger.release(session.id);
        report.sessionsFailedNoEgress += count;
      }
    }
    if (Object.values(report).some((n) => n > 0)) this.logger.log(`HLS repaired ${JSON.stringify(report)}`);
    return report;
  }
}
