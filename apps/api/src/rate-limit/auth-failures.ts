import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { RedisConnection } from '@tally/runtime';
import { RateLimitedError } from '../common/domain-error.js';
import { RateLimitMetrics } from '../metrics/rate-limit.metrics.js';
import { LeasedCounter } from './leased-counter.js';
import { RedisLeases } from './redis-leases.js';

export const AUTH_FAILURES_RESOURCE = 'client.auth_failures';
/** Failures are counted per minute: a guesser gets the configured number of tries a minute, not a burst of a shorter window. */
const WINDOW_MS = 60_000;
/** Warnings about an unreachable Redis, at most this often (every failed request would log otherwise). */
const WARN_EVERY_MS = 10_000;

/**
 * Failed authentications (no, a malformed, an unknown or a revoked key on a keyed route) per client
 * address, shared by every API replica through the same leased Redis counters as the per-app
 * limits (a window of this size is counted one failure per round trip, exactly). Only failures
 * count and only failures are refused: a client over its limit gets 429 instead of 401 for every
 * further bad key until the window ends, while a valid key from the same address (an office behind
 * one NAT) keeps working. Fails open like the other limits: while Redis does not answer, a bad key
 * gets its plain 401.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly logger = new Logger(AuthFailureLimiter.name);
  private readonly counter: LeasedCounter;
  private lastWarning = 0;

  constructor(
    redis: RedisConnection,
    private readonly metrics: RateLimitMetrics,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.counter = new LeasedCounter(new RedisLeases(redis));
  }

  /** Counts one failed authentication from `clientIp`; answers the 429 to send instead of the 401 once it is over its limit. */
  async refusal(clientIp: string): Promise<RateLimitedError | undefined> {
    const max = this.config.rateLimit.authFailuresPerMinute;
    let count;
    try {
      count = await this.counter.take(`auth:${clientIp}`, WINDOW_MS, max);
    } catch (error) {
      this.warn(error);
      return undefined;
    }
    if (count.current <= max) return undefined;
    this.metrics.refused(AUTH_FAILURES_RESOURCE);
    const retryAfterS = Math.max(1, Math.ceil(count.ttlMs / 1000));
    return new RateLimitedError({ resource: AUTH_FAILURES_RESOURCE, limit: max, windowS: WINDOW_MS / 1000, retryAfterS });
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.logger.warn(`counting failed authentications skipped, bad keys get 401 uncounted: ${String(error)}`);
  }
}
