import { Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import type { Ingress } from '@tally/db';
import { explainRefusal } from '@tally/capacity';
import { type IngressSummary, LivekitRoomClient } from '@tally/livekit';
import { roomName } from '@tally/streams';
import { INGRESS_START_LAPSE_MS, ingressIdentity } from './ingress-identity.js';
import { IngressesRepository } from './ingresses.repository.js';

/**
 * Applies LiveKit's ingress webhooks to the rows and the capacity ledger. The stream itself goes
 * live through the participant webhooks of the ingress's participant, like any publisher.
 */
@Injectable()
export class IngressLifecycle {
  private readonly logger = new Logger(IngressLifecycle.name);

  constructor(
    private readonly ingresses: IngressesRepository,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
    private readonly rooms: LivekitRoomClient,
  ) {}

  /**
   * ingress_started: media flows; the reservation taken at creation is confirmed. When it lapsed (nobody
   * pushed in time) or an earlier session gave it back, the ingress is admitted again exactly like a new
   * one, on its own node: refused, its publisher is disconnected and the app gets `ingress.refused`.
   */
  async started(summary: IngressSummary): Promise<Ingress | undefined> {
    const ingress = await this.ingresses.findByLivekitId(summary.ingressId);
    if (!ingress) return undefined;
    if (!(await this.ingresses.transition(ingress.id, ['inactive', 'error'], { status: 'publishing', error: null }))) return ingress;
    if (await this.ledger.confirm(ingress.id)) return ingress;
    const kind = ingress.kind === 'rtmp' ? 'ingress.rtmp' : 'ingress.whip';
    const admitted = await this.admitter.admit(ingress.id, ingress.appId, kind, 1, INGRESS_START_LAPSE_MS, { nodeId: ingress.nodeId });
    if (admitted.ok) {
      await this.ledger.confirm(ingress.id);
      return ingress;
    }
    const { code, resource, limit, used, requested } = admitted.refusal;
    await this.ingresses.markRefused(ingress.id, `refused on reconnect: ${explainRefusal(admitted.refusal)}`, {
      code,
      resource,
      limit,
      used,
      requested,
    });
    await this.rooms.removeParticipant(roomName(ingress.appId, ingress.streamId), ingressIdentity(ingress.id)).catch((error: unknown) => {
      this.logger.warn(`could not disconnect refused ingress ${ingress.id}: ${String(error)}`);
    });
    return ingress;
  }

  /** ingress_ended: the publisher left (the endpoint stays, and may be pushed to again) or LiveKit gave up. */
  async ended(summary: IngressSummary): Promise<Ingress | undefined> {
    const ingress = await this.ingresses.findByLivekitId(summary.ingressId);
    if (!ingress) return undefined;
    const failed = summary.state === 'error';
    await this.ingresses.transition(
      ingress.id,
      ['inactive', 'publishing'],
      failed ? { status: 'error', error: summary.error ?? 'ingress failed' } : { status: 'inactive' },
    );
    await this.ledger.release(ingress.id);
    return ingress;
  }
}
