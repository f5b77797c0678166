import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { type AttemptResult, openSecret, retryDelayMs, SecretBoxError, secretKey, WebhookSender } from '@tally/webhooks';
import { Clock } from '../clock.js';
import { EndpointHealthRepository } from './endpoint-health.repository.js';
import { type DeliveryToSend, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

export type DeliveryOutcome =
  | Readonly<{ kind: 'delivered' | 'dead' }>
  /** Failed; the next attempt is due at `at`. */
  | Readonly<{ kind: 'retry'; at: Date }>;

const KEY_CACHE_SIZE = 1_000;

/** An attempt that never left (no secret to sign with): the app's configuration, not its endpoint, failed. */
type Unsent = Readonly<{ ok: false; statusCode: null; error: string; unsent: true }>;

/**
 * One attempt of one claimed delivery (only pending rows are claimed, so a delivered one is never
 * sent again). Its attempt count walks the retry schedule, and the last allowed failure makes it dead.
 * The app's endpoint health follows: a success clears it; failures with no success in between for
 * TALLY_WEBHOOK_DISABLE_AFTER_DAYS, or one 410 Gone, disable the endpoint until the app re-enables it.
 */
@Injectable()
export class WebhookDeliverer {
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly health: EndpointHealthRepository,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * `sent` is called once the request is over (answered, failed or never made), before the outcome
   * is recorded: the receiver is done with it, so its app's slot may go to the next delivery.
   */
  async deliver(delivery: DeliveryToSend, sent: () => void = () => undefined): Promise<DeliveryOutcome> {
    if (delivery.disabledAt !== null) {
      sent();
      await this.deliveries.recordAbandoned(delivery.id, this.clock.now(), 'endpoint disabled');
      return { kind: 'dead' };
    }

    const result = await this.attempt(delivery);
    const at = this.clock.now();
    if (result.ok) {
      // Queued for the next claim to record (or its own batch), before the freed slot asks for that claim.
      const recorded = this.deliveries.recordDelivered(delivery.id, { at, statusCode: result.statusCode, error: null });
      sent();
      await recorded;
      if (delivery.failingSince !== null) await this.health.markHealthy(delivery.appId);
      return { kind: 'delivered' };
    }
    sent();
    const failed = { at, statusCode: result.statusCode, error: result.error };
    const disabled = 'unsent' in result ? undefined : await this.endpointFailed(delivery, result.statusCode, at);
    const wait = disabled ? null : retryDelayMs(delivery.attempts + 1, this.config.webhooks.retryScheduleMs);
    const next = wait === null ? null : new Date(at.getTime() + wait);
    await this.deliveries.recordFailed(delivery.id, failed, next);
    return next === null ? { kind: 'dead' } : { kind: 'retry', at: next };
  }

  /** Records the endpoint's failure; true when that disabled it (410 Gone, or failing for too long). */
  private async endpointFailed(delivery: DeliveryToSend, statusCode: number | null, at: Date): Promise<boolean> {
    if (statusCode === 410) {
      await this.health.disable(delivery.appId, at, 'gone');
      return true;
    }
    if (delivery.failingSince === null) {
      await this.health.markFailing(delivery.appId, at);
      return false;
    }
    if (at.getTime() - delivery.failingSince.getTime() < this.config.webhooks.disableAfterMs) return false;
    await this.health.disable(delivery.appId, at, 'failing');
    return true;
  }

  /** Signed at attempt time with the app's current secrets, so a rotation applies to the next attempt. */
  private async attempt(delivery: DeliveryToSend): Promise<AttemptResult | Unsent> {
    const keys = this.keysOf(delivery);
    if (!Array.isArray(keys)) return { ok: false, statusCode: null, error: keys.error, unsent: true };
    const nowS = Math.floor(this.clock.now().getTime() / 1000);
    return this.sender.attempt({
      appId: delivery.appId,
      url: delivery.url,
      body: delivery.body,
      keys,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      deliveryId: delivery.id,
      timeoutMs: this.config.webhooks.timeoutMs,
      nowS,
    });
  }

  /** Without a secret nothing is sent unsigned: the attempt fails with the reason, and is retried. */
  private keysOf(delivery: DeliveryToSend): Buffer[] | { error: string } {
    if (this.config.secretsKey === undefined) return { error: 'TALLY_SECRETS_KEY is not set: webhook secrets cannot be read' };
    if (delivery.sealedSecret === null) {
      return { error: `the app has no webhook secret: POST /v1/apps/${delivery.appId}/webhook-secret` };
    }
    const current = this.open(delivery.sealedSecret, delivery.appId);
    if (current === undefined) return { error: 'the webhook secret does not open (TALLY_SECRETS_KEY changed?)' };
    const inGrace = delivery.previousSecretUntil !== null && delivery.previousSecretUntil > this.clock.now();
    const previous =
      inGrace && delivery.sealedPreviousSecret !== null ? this.open(delivery.sealedPreviousSecret, delivery.appId) : undefined;
    return previous === undefined ? [current] : [current, previous];
  }

  /** Opening is AES-GCM per call; a small cache keeps it off the hot path (sealed values are immutable). */
  private open(sealed: string, appId: string): Buffer | undefined {
    const cached = this.keys.get(sealed);
    if (cached) return cached;
    try {
      const key = secretKey(openSecret(this.config.secretsKey!, sealed, appId));
      if (this.keys.size >= KEY_CACHE_SIZE) this.keys.clear();
      this.keys.set(sealed, key);
      return key;
    } catch (error) {
      if (error instanceof SecretBoxError) return undefined;
      throw error;
    }
  }
}
