import { Inject, Injectable, Logger } from '@nestjs/common';
import fastifyRateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { CONFIG, type Config } from '@tally/config';
import { RedisConnection } from '@tally/runtime';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PrincipalResolver } from '../auth/principal-resolver.js';
import { RateLimitedError } from '../common/domain-error.js';
import { sendError } from '../common/http-error.filter.js';
import { RateLimitMetrics } from '../metrics/rate-limit.metrics.js';
import { AppRateLimits } from './app-rates.js';
import { LeasedCounter } from './leased-counter.js';
import { RATE_LIMIT_CONFIG_KEY, type RateLimitClass } from './rate-limit-class.js';
import { RedisLeases } from './redis-leases.js';

/** One counter: whose requests it counts, how many fit in its window, and what a refusal names. */
type Bucket = Readonly<{ key: string; max: number; windowMs: number; resource: string }>;

type Limit = ReturnType<FastifyInstance['createRateLimit']>;

/** Warnings about an unreachable Redis, at most this often (every request would log otherwise). */
const WARN_EVERY_MS = 10_000;

/**
 * Per-app request rates shared by every API replica: @fastify/rate-limit with a store that counts
 * in fixed windows shared through Redis (one counter per app and budget), spending leases of each
 * window in process (LeasedCounter: never more than the limit across replicas, and one Redis round
 * trip per lease instead of per request). It runs as the first hook of every request, before the body is read and before the
 * auth guard, resolving the key through the same in-process key cache. Requests without a valid key
 * are not counted (the guard refuses them). It fails open: when Redis does not answer, requests go
 * through uncounted rather than fail (admission, which protects the hardware, needs Redis anyway).
 */
@Injectable()
export class ApiRateLimiter {
  private readonly logger = new Logger(ApiRateLimiter.name);
  private readonly buckets = new WeakMap<FastifyRequest, Bucket>();
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

  /** Registers the plugin and the hook on the API's Fastify instance, before Nest registers its routes. */
  async register(fastify: FastifyInstance): Promise<void> {
    const bucketOf = (request: FastifyRequest): Bucket => {
      const bucket = this.buckets.get(request);
      if (!bucket) throw new Error('rate limit asked for a request without a bucket');
      return bucket;
    };
    await fastify.register(fastifyRateLimit, {
      global: false,
      store: leasedStore(this.counter),
      keyGenerator: (request) => bucketOf(request).key,
      max: (request) => bucketOf(request).max,
      timeWindow: (request) => bucketOf(request).windowMs,
    });
    const limit = fastify.createRateLimit();
    fastify.addHook('onRequest', async (request, reply) => this.check(limit, request, reply));
  }

  private async check(limit: Limit, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    let result: Awaited<ReturnType<Limit>>;
    let bucket: Bucket | undefined;
    try {
      bucket = await this.bucket(request);
      if (!bucket) return undefined;
      this.buckets.set(request, bucket);
      result = await limit(request);
    } catch (error) {
      this.warn(error);
      return undefined;
    }
    if (result.isAllowed) return undefined;
    void reply.header('x-ratelimit-limit', result.max);
    void reply.header('x-ratelimit-remaining', result.remaining);
    void reply.header('x-ratelimit-reset', result.ttlInSeconds);
    if (!result.isExceeded) return undefined;
    const retryAfterS = Math.max(1, result.ttlInSeconds);
    this.metrics.refused(bucket.resource);
    sendError(
      request,
      reply,
      new RateLimitedError({ resource: bucket.resource, limit: result.max, windowS: bucket.windowMs / 1000, retryAfterS }),
    );
    return reply;
  }

  private async bucket(request: FastifyRequest): Promise<Bucket | undefined> {
    const principal = await this.principals.ofRequest(request);
    if (principal === 'missing' || principal === 'unknown') return undefined;
    const { windowS, startWindowS, adminPerMinute } = this.config.rateLimit;
    // The operator's own tooling gets one generous budget of its own, never an app's.
    if (principal.kind === 'admin')
      return { key: 'admin', max: perWindow(adminPerMinute, windowS), windowMs: windowS * 1000, resource: 'admin.requests' };
    const rates = await this.rates.of(principal.appId);
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

/** The plugin's store interface over the leased counter (every bucket's key is already unique, so children share it). */
function leasedStore(counter: LeasedCounter): FastifyRateLimitStoreCtor {
  return class implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, windowMs: number, max: number) {
      const answer = (count: { current: number; ttlMs: number }) => callback(null, { current: count.current, ttl: count.ttlMs });
      let counted;
      try {
        counted = counter.take(key, windowMs, max);
      } catch (error) {
        callback(error as Error);
        return;
      }
      if (counted instanceof Promise) counted.then(answer, (error: unknown) => callback(error as Error));
      else answer(counted);
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/** A per-minute rate as requests per window (at least one): the window's count is the burst allowed. */
export function perWindow(perMinute: number, windowS: number): number {
  return Math.max(1, Math.round((perMinute * windowS) / 60));
}
