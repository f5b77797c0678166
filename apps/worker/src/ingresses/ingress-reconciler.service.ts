import { Injectable, Logger } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { type IngressSummary, LivekitIngressClient } from '@tally/livekit';
import { NodeWorkers } from '@tally/nodes';
import { IngressLifecycle } from '@tally/streams';
import type { RedisLoss } from '../reconcile/redis-loss.js';
import { IngressesRepository } from './ingresses.repository.js';

const FLOWING = new Set<IngressSummary['state']>(['buffering', 'publishing']);
const TALLY_NAME = /^ing_[a-z0-9]+$/;

export type IngressReconcileReport = Readonly<{
  ingressesEndedVanished: number;
  ghostIngressesDeleted: number;
  reservationsRestored: number;
  /** Open ingresses written back into their node's retained work (Redis lost it). */
  workRetained: number;
}>;

/**
 * Ingresses are compared with the ones LiveKit knows. An ingress LiveKit forgot ends, giving back
 * its reservation and its hold on the node's ingress worker; a LiveKit ingress named like one of
 * Tally's that no open ingress owns is deleted; a publishing ingress that lost its reservation
 * (Redis restarted without data) gets it back.
 */
@Injectable()
export class IngressReconciler {
  private readonly logger = new Logger(IngressReconciler.name);

  constructor(
    private readonly ingresses: IngressesRepository,
    private readonly lifecycle: IngressLifecycle,
    private readonly livekit: LivekitIngressClient,
    private readonly ledger: CapacityLedger,
    private readonly workers: NodeWorkers,
  ) {}

  /**
   * `loss`: when Redis last lost its data. LiveKit keeps its ingresses in the same Redis,
   * so one created before then may be missing from its list while its publisher still pushes: it is
   * not ended for that, and keeps its reservation while its row says it publishes.
   */
  async run(now: Date, loss?: RedisLoss): Promise<IngressReconcileReport> {
    const forgottenBefore = loss?.lostAt;
    // Rows first: creation writes the row only after LiveKit answered, so every row read here is
    // already in the list read next.
    const open = await this.ingresses.open();
    const known = await this.livekit.list();
    const byId = new Map(known.map((i) => [i.ingressId, i]));
    const report = { ingressesEndedVanished: 0, ghostIngressesDeleted: 0, reservationsRestored: 0, workRetained: 0 };

    // The node's agent keeps its ingress worker while any ingress is retained: the sets Redis lost are
    // written back once, in the sweep that noticed (later, a delete racing this sweep could be re-added).
    if (loss?.detectedNow) {
      report.workRetained = await this.workers.retainAll(open.map((i) => ({ nodeId: i.nodeId, kind: 'ingress' as const, workId: i.id })));
    }
    for (const ingress of open) {
      const summary = byId.get(ingress.livekitIngressId);
      const forgotten = !summary && forgottenBefore !== undefined && ingress.createdAt < forgottenBefore;
      if (forgotten) {
        if (ingress.status === 'publishing' && (await this.lifecycle.restore(ingress))) report.reservationsRestored += 1;
      } else if (!summary) {
        if (await this.lifecycle.vanished(ingress, now)) report.ingressesEndedVanished += 1;
      } else if (ingress.status === 'publishing' && FLOWING.has(summary.state) && (await this.lifecycle.restore(ingress))) {
        report.reservationsRestored += 1;
      }
    }

    const owned = new Set(open.map((i) => i.livekitIngressId));
    for (const summary of known) {
      if (owned.has(summary.ingressId) || !TALLY_NAME.test(summary.name)) continue;
      // A creation in flight holds its reservation before LiveKit answers and writes the row after.
      if (await this.ledger.held(summary.name)) continue;
      if (await this.ingresses.isOpen(summary.ingressId)) continue;
      await this.livekit.delete(summary.ingressId).then(
        () => (report.ghostIngressesDeleted += 1),
        (error: unknown) => this.logger.warn(`could not delete ghost ingress ${summary.ingressId}: ${String(error)}`),
      );
    }
    if (Object.values(report).some((n) => n > 0)) this.logger.log(`ingresses repaired ${JSON.stringify(report)}`);
    return report;
  }
}
