import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config, createRedis } from '@tally/config';
import { WEBHOOK_WAKE_CHANNEL } from '@tally/contracts';
import type { Redis } from 'ioredis';
import { WebhookDeliverer } from './webhook-deliverer.service.js';
import { type DeliveryToSend, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

/**
 * A claim lasts LEASE_MS and is renewed every RENEW_MS while its attempt runs (one UPDATE for all
 * of this worker's claims), so a SIGKILLed worker's deliveries are claimable again within LEASE_MS.
 * An event loop stalled for longer than that costs a duplicate delivery (at-least-once), never a
 * lost one. POLL_MS bounds how late a due row is seen without a wake: a retry coming due, a wake
 * lost to a crash between commit and publish, a dead worker's lapsed claims.
 */
export const WEBHOOK_LEASE = { leaseMs: 2_000, renewMs: 500, pollMs: 500 } as const;
/**
 * A finished attempt asks for a claim this much later, so the slots freed meanwhile share one
 * statement: the socket write of a statement costs the worker more CPU than its rows (the bench's
 * profile), and a claim run at every freed slot carries one or two.
 */
const CLAIM_WINDOW_MS = 2;
/** A retry due within this is claimed on time by a timer of its own; later ones by the poll. */
const RETRY_TIMER_MAX_MS = 60_000;

/**
 * Claims due webhook deliveries from PostgreSQL and attempts them, at most
 * TALLY_WEBHOOK_APP_CONCURRENCY at a time per app in this process: a receiver that never answers
 * holds only its own app's slots, and every other app's rows are claimed as if it did not exist
 * (docs/adr/0019-webhook-deliveries-claimed-from-postgres.md). Claims run one at a time; whatever
 * asks for one while it runs (a wake, a finished attempt, the poll) gets the next, and finished
 * attempts wait CLAIM_WINDOW_MS for company, so a busy worker claims in batches.
 */
@Injectable()
export class WebhookDispatcher {
  /** This process's name on its leases. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly logger = new Logger(WebhookDispatcher.name);
  /** Per app: its requests in flight. */
  private readonly requests = new Map<string, number>();
  /** Per app: its claimed deliveries not yet recorded (requests in flight included). */
  private readonly held = new Map<string, number>();
  private readonly attempts = new Map<string, Promise<void>>();
  private readonly subscriber: Redis;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private claimTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly deliverer: WebhookDeliverer,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.subscriber = createRedis(config.redis, { maxRetriesPerRequest: null, lazyConnect: true });
  }

  async start(): Promise<void> {
    this.subscriber.on('message', () => this.claimSoon());
    this.subscriber.on('error', (error: Error) => this.logger.warn(`wake channel: ${error.message}`));
    await this.subscriber.connect();
    await this.subscriber.subscribe(WEBHOOK_WAKE_CHANNEL);
    this.pollTimer = setInterval(() => this.claimSoon(), WEBHOOK_LEASE.pollMs);
    this.renewTimer = setInterval(() => void this.renew(), WEBHOOK_LEASE.renewMs);
    this.claimSoon();
  }

  /** Attempts in flight (for tests). */
  inFlight(): number {
    return this.attempts.size;
  }

  /**
   * Stops claiming, lets the attempts it holds finish (each is bounded by the attempt timeout) while
   * still renewing their leases, gives back any lease left, then closes its Redis connection.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.claimTimer);
    await this.claiming;
    await Promise.allSettled([...this.attempts.values()]);
    clearInterval(this.renewTimer);
    await this.deliveries
      .release(this.owner, [...this.attempts.keys()])
      .catch((error: unknown) => this.logger.warn(`releasing webhook leases: ${String(error)}`));
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  /** Claims now, or after `windowMs` with whatever else asks meanwhile; one claim at a time. */
  private claimSoon(windowMs = 0): void {
    if (this.stopping) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    if (windowMs > 0) {
      this.claimTimer ??= setTimeout(() => {
        this.claimTimer = undefined;
        this.claimSoon();
      }, windowMs);
      return;
    }
    clearTimeout(this.claimTimer);
    this.claimTimer = undefined;
    this.claimAgain = false;
    this.claiming = this.claim()
      .catch((error: unknown) => this.logger.error(`claiming webhook deliveries failed: ${String(error)}`))
      .finally(() => {
        this.claiming = undefined;
        if (this.claimAgain) this.claimSoon(CLAIM_WINDOW_MS);
      });
  }

  private async claim(): Promise<void> {
    const cap = this.config.webhooks.appConcurrency;
    // An app's free slots: `cap` less its requests in flight, and never more than 2 × `cap` claimed
    // at once, so an app whose failures are slow to record cannot pile up writes ahead of others.
    const running = new Map([...this.held].map(([appId, held]) => [appId, Math.max(this.requests.get(appId) ?? 0, held - cap)]));
    const slots = { cap, running };
    for (const delivery of await this.deliveries.claim(this.owner, slots, WEBHOOK_LEASE.leaseMs)) this.attempt(delivery);
  }

  private attempt(delivery: DeliveryToSend): void {
    increment(this.requests, delivery.appId, 1);
    increment(this.held, delivery.appId, 1);
    let holdsSlot = true;
    // The slot is the app's request in flight: it frees when the request is over, not when its
    // outcome is written (the row stays leased to this worker, and renewed, until then), so the
    // claim that takes its replacement can also carry its success.
    const freeSlot = () => {
      if (!holdsSlot) return;
      holdsSlot = false;
      increment(this.requests, delivery.appId, -1);
      this.claimSoon(CLAIM_WINDOW_MS);
    };
    const done = this.deliverer
      .deliver(delivery, freeSlot)
      .then((outcome) => {
        const wait = outcome.kind === 'retry' ? outcome.at.getTime() - Date.now() : Infinity;
        if (wait <= RETRY_TIMER_MAX_MS) setTimeout(() => this.claimSoon(), Math.max(0, wait)).unref();
      })
      // The row keeps its lease until it lapses; then it is claimed and attempted again.
      .catch((error: unknown) => this.logger.error(`webhook delivery ${delivery.id} of ${delivery.appId} failed: ${String(error)}`))
      .finally(() => {
        this.attempts.delete(delivery.id);
        // Past `cap` held, the app's claims are bounded by what it holds, not by its requests.
        const atBound = (this.held.get(delivery.appId) ?? 0) > this.config.webhooks.appConcurrency;
        increment(this.held, delivery.appId, -1);
        freeSlot();
        if (atBound) this.claimSoon(CLAIM_WINDOW_MS);
      });
    this.attempts.set(delivery.id, done);
  }

  private async renew(): Promise<void> {
    try {
      await this.deliveries.renew(this.owner, [...this.attempts.keys()], WEBHOOK_LEASE.leaseMs);
    } catch (error) {
      this.logger.warn(`renewing webhook leases: ${String(error)}`);
    }
  }
}

function increment(counts: Map<string, number>, key: string, by: 1 | -1): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}
