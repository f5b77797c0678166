import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { RedisConnection } from '@tally/runtime';
import { AuthFailureGate } from '../tenancy/auth-failure-gate.js';
import { clientGroup } from '../tenancy/client-group.js';
import { RateLimitedError } from '../common/domain-error.js';
import { RateLimitMetrics } from './rate-limit.metrics.js';
import { LeasedCounter } from './leased-counter.js';
import { RedisLeases } from './redis-leases.js';

export const AUTH_FAILURES_RESOURCE = 'client.auth_failures';
/** Failures are counted per minute: a guesser gets the configured number of tries a minute, not a burst of a shorter window. */
const WINDOW_MS = 60_000;
/** Warnings about an unreachable Redis, at most this often (every failed request would log otherwise). */
const WARN_EVERY_MS = 10_000;

/**
 * Failed authentications (no, a malformed, an unknown or a revoked key on a keyed route; a wrong
 * camera viewer token) per client address (an IPv6 client per /64, clientGroup), shared by every API replica through the same leased Redis counters as the per-app
 * limits (a window of this size is counted one failure per round trip, exactly). Only failures
 * count and only failures are refused: a client over its limit gets 429 instead of 401 for every
 * further bad key until the window ends, while a valid key from the same address (an office behind
 * one NAT) keeps working. Fails open like the other limits: while Redis does not answer, a bad key
 * gets its plain 401. A refused client is remembered in the AuthFailureGate, which the key lookup
 * consults first: until the window ends its bad keys cost no Postgres query.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly logger = new Logger(AuthFailureLimiter.name);
  private readonly counter: LeasedCounter;
  private lastWarning = 0;

  constructor(
    redis: RedisConnection,
    private readonly metrics: RateLimitMetrics,
    private readonly gate: AuthFailureGate,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.counter = new LeasedCounter(new RedisLeases(redis));
  }

  /** Counts one failed authentication from `clientIp`; answers the 429 to send instead of the 401 once it is over its limit. */
  async refusal(clientIp: string): Promise<RateLimitedError | undefined> {
    const max = this.config.rateLimit.authFailuresPerMinute;
    const group = clientGroup(clientIp);
    let count;
    try {
      count = await this.counter.take(`auth:${group}`, WINDOW_MS, max);
    } catch (error) {
      this.warn(error);
      return undefined;
    }
    if (count.current <= max) return undefined;
    this.metrics.refused(AUTH_FAILURES_RESOURCE);
    const retryAfterS = Math.max(1, Math.ceil(count.ttlMs / 1000));
    this.gate.block(group, Date.now() + count.ttlMs, max, WINDOW_MS / 1000);
    return new RateLimitedError({ resource: AUTH_FAILURES_RESOURCE, limit: max, windowS: WINDOW_MS / 1000, retryAfterS });
  }

  /** The 429 for a client already refused in this window, answered without counting or looking anything up. */
  refusedBeforeLookup(clientIp: string): RateLimitedError | undefined {
    const refusal = this.gate.refusal(clientGroup(clientIp));
    if (refusal === undefined) return undefined;
    this.metrics.refused(AUTH_FAILURES_RESOURCE);
    return new RateLimitedError({ resource: AUTH_FAILURES_RESOURCE, ...refusal });
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.logger.warn(`counting failed authentications skipped, bad keys get 401 uncounted: ${String(error)}`);
  }
}
