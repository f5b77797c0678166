import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { type AttemptResult, backoffDelayMs, openSecret, SecretBoxError, secretKey, WebhookSender } from '@tally/webhooks';
import { Clock } from '../clock.js';
import { type DeliveryToSend, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

export type DeliveryOutcome =
  | Readonly<{ kind: 'skipped' | 'delivered' | 'dead' }>
  /** Failed; the next attempt is due at `at`. */
  | Readonly<{ kind: 'retry'; at: Date }>;

/**
 * One attempt of one delivery. The row decides: a delivery that is not pending is never sent
 * again, its attempt count drives the backoff, and the last allowed failure makes it dead.
 */
const KEY_CACHE_SIZE = 1_000;

@Injectable()
export class WebhookDeliverer {
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async deliver(deliveryId: string): Promise<DeliveryOutcome> {
    const delivery = await this.deliveries.load(deliveryId);
    if (!delivery || delivery.status !== 'pending') return { kind: 'skipped' };

    const result = await this.attempt(delivery);
    const at = this.clock.now();
    if (result.ok) {
      await this.deliveries.recordDelivered(delivery.id, { at, statusCode: result.statusCode, error: null });
      return { kind: 'delivered' };
    }
    const attempts = delivery.attempts + 1;
    const { webhooks } = this.config;
    const next = attempts >= webhooks.maxAttempts ? null : new Date(at.getTime() + backoffDelayMs(attempts, webhooks));
    await this.deliveries.recordFailed(delivery.id, { at, statusCode: result.statusCode, error: result.error }, next);
    return next === null ? { kind: 'dead' } : { kind: 'retry', at: next };
  }

  /** Signed at attempt time with the app's current secrets, so a rotation applies to the next attempt. */
  private async attempt(delivery: DeliveryToSend): Promise<AttemptResult | Readonly<{ ok: false; statusCode: null; error: string }>> {
    const keys = this.keysOf(delivery);
    if (!Array.isArray(keys)) return { ok: false, statusCode: null, error: keys.error };
    const nowS = Math.floor(this.clock.now().getTime() / 1000);
    return this.sender.attempt({
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
