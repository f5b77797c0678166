import type { Admitter, CapacityLedger } from '@tally/admission';
import { explainRefusal, type WorkloadKind } from '@tally/capacity';
import type { IngressRefusedData } from '@tally/contracts';
import type { Ingress, IngressKind, IngressStatus, Prisma, PrismaClient } from '@tally/db';
import type { IngressSummary, LivekitRoomClient } from '@tally/livekit';
import type { NodeWorkers } from '@tally/nodes';
import type { WebhookOutbox } from '@tally/webhooks';
import { toIngressView } from './ingress.view.js';
import { roomName } from './stream-room.js';

/**
 * An encoder has this long after creation (or after its ingress was admitted again) to start pushing
 * before the ingress's reservation lapses; ingress_started confirms it.
 */
export const INGRESS_START_LAPSE_MS = 10 * 60_000;

/** The LiveKit participant an ingress publishes as, in its stream's room. */
export function ingressIdentity(ingressId: string): string {
  return `ingress-${ingressId}`;
}

/** The workload an ingress of `kind` is admitted as. */
export function ingressWorkload(kind: IngressKind): WorkloadKind {
  return kind === 'rtmp' ? 'ingress.rtmp' : 'ingress.whip';
}

/**
 * The ingress state machine, shared by the API (LiveKit's ingress webhooks, DELETE) and the worker
 * (reconciliation, app teardown). Rows change first, then the reservation and the node's hold on
 * its ingress worker are given back. The stream itself goes live through the participant webhooks
 * of the ingress's participant, like any publisher.
 */
export class IngressLifecycle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
    private readonly outbox: WebhookOutbox,
    private readonly workers: NodeWorkers,
    private readonly rooms: LivekitRoomClient,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * ingress_started: media flows; the reservation taken at creation is confirmed. When it lapsed (nobody
   * pushed in time) or an earlier session gave it back, the ingress is admitted again exactly like a new
   * one, on its own node: refused, its publisher is disconnected and the app gets `ingress.refused`.
   */
  async started(summary: IngressSummary): Promise<Ingress | undefined> {
    const ingress = await this.findByLivekitId(summary.ingressId);
    if (!ingress) return undefined;
    if (!(await this.transition(ingress.id, ['inactive', 'error'], { status: 'publishing', error: null }))) return ingress;
    if (await this.ledger.confirm(ingress.id)) return ingress;
    const admitted = await this.admitter.admit(ingress.id, ingress.appId, ingressWorkload(ingress.kind), 1, INGRESS_START_LAPSE_MS, {
      nodeId: ingress.nodeId,
    });
    if (admitted.ok) {
      await this.ledger.confirm(ingress.id);
      return ingress;
    }
    const { code, resource, limit, used, requested } = admitted.refusal;
    await this.markRefused(ingress.id, `refused on reconnect: ${explainRefusal(admitted.refusal)}`, {
      code,
      resource,
      limit,
      used,
      requested,
    });
    await this.rooms.removeParticipant(roomName(ingress.appId, ingress.streamId), ingressIdentity(ingress.id)).catch((error: unknown) => {
      this.warn(`could not disconnect refused ingress ${ingress.id}: ${String(error)}`);
    });
    return ingress;
  }

  /** ingress_ended: the publisher left (the endpoint stays, and may be pushed to again) or LiveKit gave up. */
  async ended(summary: IngressSummary): Promise<Ingress | undefined> {
    const ingress = await this.findByLivekitId(summary.ingressId);
    if (!ingress) return undefined;
    const failed = summary.state === 'error';
    await this.transition(
      ingress.id,
      ['inactive', 'publishing'],
      failed ? { status: 'error', error: summary.error ?? 'ingress failed' } : { status: 'inactive' },
    );
    await this.ledger.release(ingress.id);
    return ingress;
  }

  /** Deleted by its app, or with its app, once LiveKit no longer has the endpoint: ended and deleted, its capacity given back. */
  async deleted(ingress: Ingress, at: Date): Promise<void> {
    await this.prisma.ingress.updateMany({ where: { id: ingress.id, deletedAt: null }, data: { status: 'ended', deletedAt: at } });
    await this.giveBack(ingress);
  }

  /** LiveKit no longer knows the ingress: it ends, its capacity given back. True when this call ended it. */
  async vanished(ingress: Ingress, at: Date): Promise<boolean> {
    const { count } = await this.prisma.ingress.updateMany({
      where: { id: ingress.id, status: { not: 'ended' } },
      data: { status: 'ended', error: 'LiveKit no longer knows this ingress', updatedAt: at },
    });
    await this.giveBack(ingress);
    return count === 1;
  }

  /** A publishing ingress without a reservation (Redis lost it) gets it back on its node. True when restored. */
  async restore(ingress: Ingress): Promise<boolean> {
    if (await this.ledger.held(ingress.id)) return false;
    return this.admitter.restore(ingress.id, ingress.appId, ingressWorkload(ingress.kind), 1, { nodeId: ingress.nodeId });
  }

  /** The reservation, then the node's hold on its ingress worker (the agent stops the worker when none is left). */
  private async giveBack(ingress: Ingress): Promise<void> {
    await this.ledger.release(ingress.id);
    await this.workers.dropWork(ingress.nodeId, 'ingress', ingress.id);
  }

  private findByLivekitId(livekitIngressId: string): Promise<Ingress | null> {
    return this.prisma.ingress.findUnique({ where: { livekitIngressId } });
  }

  /** Moves the row from one of `from` to the new state; false when it was in none of them (another writer won). */
  private async transition(id: string, from: IngressStatus[], data: Prisma.IngressUpdateManyMutationInput): Promise<boolean> {
    const { count } = await this.prisma.ingress.updateMany({ where: { id, status: { in: from } }, data });
    return count === 1;
  }

  /** publishing → error with the refusal, and its ingress.refused event staged in the same transaction. */
  private async markRefused(id: string, error: string, refusal: IngressRefusedData['refusal']): Promise<boolean> {
    const staged = await this.prisma.$transaction(async (tx) => {
      const [ingress] = await tx.ingress.updateManyAndReturn({ where: { id, status: 'publishing' }, data: { status: 'error', error } });
      if (!ingress) return { refused: false, event: undefined };
      return {
        refused: true,
        event: await this.outbox.stage(tx, ingress.appId, 'ingress.refused', { ingress: toIngressView(ingress), refusal }),
      };
    });
    await this.outbox.flush([staged.event]);
    return staged.refused;
  }
}
