import { rm } from 'node:fs/promises';
import type { Admitter, CapacityLedger } from '@tally/admission';
import { egressKindOf, type EgressMode } from '@tally/capacity';
import type { HlsSession, HlsStatus, Prisma, PrismaClient } from '@tally/db';
import type { LivekitEgressClient } from '@tally/livekit';

export const OPEN_HLS: HlsStatus[] = ['starting', 'live'];

export type HlsLifecycleOptions = Readonly<{
  /** How long a stopped session's segments stay servable (TALLY_HLS_RETENTION_S). */
  retentionS: number;
  log: (message: string) => void;
  /** The clock the retention period starts from. */
  now: () => Date;
}>;

/**
 * The live HLS session state machine, shared by the API (start, stop) and the worker (the HLS sweep,
 * reconciliation, app teardown): starting → live once egress wrote the playlist, → failed when its
 * egress never ran, open → stopped, then its segments purged after the retention period. Every
 * transition is a conditional update; the reservation (the session id) is given back after the row
 * changed, and only by the writer that changed it.
 */
export class HlsLifecycle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
    private readonly egress: LivekitEgressClient,
    private readonly options: HlsLifecycleOptions,
  ) {}

  /** LiveKit accepted the egress: its id is stored and the reservation confirmed. */
  async egressStarted(id: string, egressId: string): Promise<void> {
    await this.prisma.hlsSession.updateMany({ where: { id }, data: { egressId } });
    await this.ledger.confirm(id);
  }

  /** An egress found by the session id in its path is the session's (its start call's reply was lost). */
  async adoptEgress(id: string, egressId: string): Promise<boolean> {
    const { count } = await this.prisma.hlsSession.updateMany({ where: { id, egressId: null }, data: { egressId } });
    return count === 1;
  }

  /** starting → live: egress wrote the playlist. */
  promote(id: string): Promise<boolean> {
    return this.transition(id, { status: { in: ['starting'] } }, { status: 'live' });
  }

  /**
   * starting → failed, its segments due for deletion at once. `withoutEgress`: only while no egress
   * id is stored (the API stopped before asking LiveKit). True when this call failed it.
   */
  async fail(session: HlsSession, error: string, at: Date, withoutEgress = false): Promise<boolean> {
    const where = { status: { in: ['starting' as const] }, ...(withoutEgress ? { egressId: null } : {}) };
    const failed = await this.transition(session.id, where, { status: 'failed', error, stoppedAt: at, purgeAt: at });
    if (failed) await this.ledger.release(session.id);
    return failed;
  }

  /**
   * Stops the session's egress (best effort: a gone room has ended it already), then starts its
   * retention. `stoppedAt` may be earlier than the stop (the stream ended before a sweep noticed):
   * the segments stay servable for the whole retention period from the moment the row says
   * `stopped`, however long LiveKit took to answer the egress stop.
   */
  async finish(session: HlsSession, stoppedAt: Date): Promise<void> {
    if (session.egressId) {
      await this.egress.stop(session.egressId).catch((error: unknown) => {
        this.options.log(`HLS ${session.id}: egress ${session.egressId} already ended (${String(error)})`);
      });
    }
    const now = this.options.now();
    const purgeAt = new Date(Math.max(stoppedAt.getTime(), now.getTime()) + this.options.retentionS * 1000);
    await this.transition(session.id, { status: { in: OPEN_HLS } }, { status: 'stopped', stoppedAt, purgeAt });
    await this.ledger.release(session.id);
  }

  /** The retention period is over: the segments are deleted. */
  async purge(session: HlsSession, now: Date): Promise<void> {
    await rm(session.dir, { recursive: true, force: true });
    await this.prisma.hlsSession.updateMany({ where: { id: session.id }, data: { purgedAt: now } });
    await this.ledger.release(session.id);
  }

  /** A session whose egress runs keeps its reservation, restored on its own node when lost. True when restored. */
  async keepReserved(session: HlsSession): Promise<boolean> {
    if (await this.ledger.confirm(session.id)) return false;
    const kind = egressKindOf(session.mode as EgressMode);
    return this.admitter.restore(session.id, session.appId, kind, 1, { nodeId: session.nodeId, diskRole: 'hls' });
  }

  private async transition(
    id: string,
    where: Prisma.HlsSessionWhereInput,
    data: Prisma.HlsSessionUpdateManyMutationInput,
  ): Promise<boolean> {
    const { count } = await this.prisma.hlsSession.updateMany({ where: { ...where, id }, data });
    return count === 1;
  }
}
