import { Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { type Ingress, PrismaService } from '@tally/db';
import { type IngressSummary, LivekitIngressClient } from '@tally/livekit';
import { NodeWorkers } from '@tally/nodes';
import type { RedisLoss } from '../reconcile/redis-loss.js';

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
    private readonly prisma: PrismaService,
    private readonly livekit: LivekitIngressClient,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
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
    const open = await this.prisma.ingress.findMany({ where: { deletedAt: null, status: { not: 'ended' } } });
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
        if (ingress.status === 'publishing' && (await this.restore(ingress))) report.reservationsRestored += 1;
      } else if (!summary) {
        const { count } = await this.prisma.ingress.updateMany({
          where: { id: ingress.id, status: { not: 'ended' } },
          data: { status: 'ended', error: 'LiveKit no longer knows this ingress', updatedAt: now },
        });
        await this.ledger.release(ingress.id);
        await this.workers.dropWork(ingress.nodeId, 'ingress', ingress.id);
        report.ingressesEndedVanished += count;
      } else if (ingress.status === 'publishing' && FLOWING.has(summary.state) && (await this.restore(ingress))) {
        report.reservationsRestored += 1;
      }
    }

    const owned = new Set(open.map((i) => i.livekitIngressId));
    for (const summary of known) {
      if (owned.has(summary.ingressId) || !TALLY_NAME.test(summary.name)) continue;
      // A creation in flight holds its reservation before LiveKit answers and writes the row after.
      if (await this.ledger.held(summary.name)) continue;
      if (await this.isOpen(summary.ingressId)) continue;
      await this.livekit.delete(summary.ingressId).then(
        () => (report.ghostIngressesDeleted += 1),
        (error: unknown) => this.logger.warn(`could not delete ghost ingress ${summary.ingressId}: ${String(error)}`),
      );
    }
    if (Object.values(report).some((n) => n > 0)) this.logger.log(`ingresses repaired ${JSON.stringify(report)}`);
    return report;
  }

  /** A publishing ingress without a reservation gets it back on its node. True when restored. */
  private async restore(ingress: Ingress): Promise<boolean> {
    if (await this.ledger.held(ingress.id)) return false;
    const kind = ingress.kind === 'rtmp' ? 'ingress.rtmp' : 'ingress.whip';
    return this.admitter.restore(ingress.id, ingress.appId, kind, 1, { nodeId: ingress.nodeId });
  }

  /** Re-read: a row written after the first read (its creation finished meanwhile) owns its ingress. */
  private async isOpen(livekitIngressId: string): Promise<boolean> {
    const row = await this.prisma.ingress.findUnique({ where: { livekitIngressId }, select: { status: true, deletedAt: true } });
    return row !== null && row.deletedAt === null && row.status !== 'ended';
  }
}
