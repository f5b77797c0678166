import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { RedisConnection } from '@tally/runtime';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PrincipalResolver } from '../tenancy/principal-resolver.js';
import { RateLimitedError } from '../common/domain-error.js';
import { sendError } from '../common/http-error.filter.js';
import { RateLimitMetrics } from './rate-limit.metrics.js';
import { AppRateLimits } from './app-rates.js';
import { type Count, LeasedCounter } from './leased-counter.js';
import { RATE_LIMIT_CONFIG_KEY, type RateLimitClass } from '../routes/rate-limit-class.js';
import { RedisLeases } from './redis-leases.js';

/** One counter: whose requests it counts, how many fit in its window, and what a refusal names. */
type Bucket = Readonly<{ key: string; max: number; windowMs: number; resource: string }>;

/** Warnings about an unreachable Redis, at most this often (every request would log otherwise). */
const WARN_EVERY_MS = 10_000;

/**
 * Per-app request rates shared by every API replica: fixed windows counted in Redis (one counter per
 * app and budget), spent in process from leases of each window (LeasedCounter: never more than the
 * limit across replicas, and one Redis round trip per lease instead of per request). The hook calls
 * the counter directly, with the x-ratelimit-* headers @fastify/rate-limit writes: the plugin's
 * per-request key, max, window and store calls cost a keyed request more CPU than counting it
 * (docs/capacity.md). It runs as the first hook of every request, before the body is read and
 * before the auth guard, resolving the key through the same in-process key cache. Requests without
 * a valid key are not counted (the guard refuses them). It fails open: when Redis does not answer,
 * requests go through uncounted rather than fail (admission, which protects the hardware, needs
 * Redis anyway).
 */
@Injectable()
export class ApiRateLimiter {
  private readonly logger = new Logger(ApiRateLimiter.name);
  private lastWarning = 0;
  private readonly counter: LeasedCounter;

  constructor(
    private readonly principals: PrincipalResolver,
    private readonly rates: AppRateLimits,
    redis: RedisConnection,
    private readonly metrics: RateLimitMetrics,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.counter = new LeasedCounter(new RedisLeases(redis));
  }

  /** Registers the hook on the API's Fastify instance, before Nest registers its routes. */
  register(fastify: FastifyInstance): void {
    fastify.addHook('onRequest', async (request, reply) => this.check(request, reply));
  }

  private async check(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    let bucket: Bucket | undefined;
    let count: Count;
    try {
      bucket = await this.bucket(request);
      if (!bucket) return undefined;
      const counted = this.counter.take(bucket.key, bucket.windowMs, bucket.max);
      count = counted instanceof Promise ? await counted : counted;
    } catch (error) {
      this.warn(error);
      return undefined;
    }
    const ttlInSeconds = Math.ceil(count.ttlMs / 1000);
    void reply.header('x-ratelimit-limit', bucket.max);
    void reply.header('x-ratelimit-remaining', Math.max(0, bucket.max - count.current));
    void reply.header('x-ratelimit-reset', ttlInSeconds);
    if (count.current <= bucket.max) return undefined;
    const retryAfterS = Math.max(1, ttlInSeconds);
    this.metrics.refused(bucket.resource);
    sendError(
      request,
      reply,
      new RateLimitedError({ resource: bucket.resource, limit: bucket.max, windowS: bucket.windowMs / 1000, retryAfterS }),
    );
    return reply;
  }

  private async bucket(request: FastifyRequest): Promise<Bucket | undefined> {
    const principal = await this.principals.ofRequest(request);
    if (principal === 'missing' || principal === 'unknown' || principal === 'throttled') return undefined;
    const { windowS, startWindowS, adminPerMinute } = this.config.rateLimit;
    // The operator's own tooling gets one generous budget of its own, never an app's.
    if (principal.kind === 'admin')
      return { key: 'admin', max: perWindow(adminPerMinute, windowS), windowMs: windowS * 1000, resource: 'admin.requests' };
    const rates = this.rates.cached(principal.appId) ?? (await this.rates.of(principal.appId));
    const routeConfig = request.routeOptions.config as unknown as Partial<Record<typeof RATE_LIMIT_CONFIG_KEY, RateLimitClass>> | undefined;
    const routeClass = routeConfig?.[RATE_LIMIT_CONFIG_KEY];
    if (routeClass === 'start') {
      return {
        key: `app:${principal.appId}:start:${request.method}:${request.routeOptions.url ?? ''}`,
        max: perWindow(rates.startsPerMinute, startWindowS),
        windowMs: startWindowS * 1000,
        resource: 'app.starts',
      };
    }
    return {
      key: `app:${principal.appId}`,
      max: perWindow(rates.requestsPerMinute, windowS),
      windowMs: windowS * 1000,
      resource: 'app.requests',
    };
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.logger.warn(`rate limiting skipped, requests pass uncounted: ${String(error)}`);
  }
}

/** A per-minute rate as requests per window (at least one): the window's count is the burst allowed. */
export function perWindow(perMinute: number, windowS: number): number {
  return Math.max(1, Math.round((perMinute * windowS) / 60));
}
