import { Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import type { Ingress } from '@tally/db';
import type { IngressSummary } from '@tally/livekit';
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
  ) {}

  /** ingress_started: media flows; the reservation taken at creation is confirmed. */
  async started(summary: IngressSummary): Promise<Ingress | undefined> {
    const ingress = await this.ingresses.findByLivekitId(summary.ingressId);
    if (!ingress) return undefined;
    if (!(await this.ingresses.transition(ingress.id, ['inactive', 'error'], { status: 'publishing', error: null }))) return ingress;
    if (!(await this.ledger.confirm(ingress.id))) {
      // The creation reservation lapsed (nobody pushed in time) or an earlier session gave it back:
      // the encoder is already pushing, so it is charged to a node without a quota check.
      const restored = await this.admitter.restore(ingress.id, ingress.appId, ingress.kind === 'rtmp' ? 'ingress.rtmp' : 'ingress.whip', 1);
      if (!restored) this.logger.warn(`ingress ${ingress.id} publishes without a reservation: no node has room for it`);
    }
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
