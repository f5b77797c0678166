import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { RedisConnection } from '@tally/runtime';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PrincipalResolver, type Unresolved } from '../tenancy/principal-resolver.js';
import type { Principal } from '../tenancy/principal.js';
import { RateLimitedError } from '../common/domain-error.js';
import { sendError } from '../common/http-error.filter.js';
import { RateLimitMetrics } from './rate-limit.metrics.js';
import { type AppRates, AppRateLimits } from './app-rates.js';
import { type Count, LeasedCounter, MAX_WINDOWS } from './leased-counter.js';
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
  private readonly adminBucket: Bucket;
  /** Each app's request bucket, for the rates it was built from (AppRateLimits hands out the same object until they change). */
  private readonly requestBuckets = new Map<string, Readonly<{ rates: AppRates; bucket: Bucket }>>();

  constructor(
    private readonly principals: PrincipalResolver,
    private readonly rates: AppRateLimits,
    redis: RedisConnection,
    private readonly metrics: RateLimitMetrics,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.counter = new LeasedCounter(new RedisLeases(redis));
    const { windowS, adminPerMinute } = config.rateLimit;
    this.adminBucket = { key: 'admin', max: perWindow(adminPerMinute, windowS), windowMs: windowS * 1000, resource: 'admin.requests' };
  }

  /** Registers the hook on the API's Fastify instance, before Nest registers its routes. */
  register(fastify: FastifyInstance): void {
    // Callback-style: a request whose key, rates and lease are all in process is counted without a promise.
    fastify.addHook('onRequest', (request, reply, done) => {
      const refused = this.check(request, reply);
      if (refused === false) done();
      else if (refused !== true)
        refused.then(
          (sent) => (sent ? undefined : done()),
          () => done(),
        );
    });
  }

  /** Counts the request; true when it was refused (the 429 is sent). Never rejects: a failure lets the request through. */
  private check(request: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> {
    try {
      const bucket = this.bucket(request);
      if (bucket instanceof Promise)
        return bucket.then(
          (resolved) => this.count(request, reply, resolved),
          (error: unknown) => this.failOpen(error),
        );
      return this.count(request, reply, bucket);
    } catch (error) {
      return this.failOpen(error);
    }
  }

  private count(request: FastifyRequest, reply: FastifyReply, bucket: Bucket | undefined): boolean | Promise<boolean> {
    if (!bucket) return false;
    let counted: Count | Promise<Count>;
    try {
      counted = this.counter.take(bucket.key, bucket.windowMs, bucket.max);
    } catch (error) {
      return this.failOpen(error);
    }
    if (counted instanceof Promise)
      return counted.then(
        (count) => this.answer(request, reply, bucket, count),
        (error: unknown) => this.failOpen(error),
      );
    return this.answer(request, reply, bucket, counted);
  }

  private answer(request: FastifyRequest, reply: FastifyReply, bucket: Bucket, count: Count): boolean {
    const ttlInSeconds = Math.ceil(count.ttlMs / 1000);
    void reply.header('x-ratelimit-limit', bucket.max);
    void reply.header('x-ratelimit-remaining', Math.max(0, bucket.max - count.current));
    void reply.header('x-ratelimit-reset', ttlInSeconds);
    if (count.current <= bucket.max) return false;
    const retryAfterS = Math.max(1, ttlInSeconds);
    this.metrics.refused(bucket.resource);
    sendError(
      request,
      reply,
      new RateLimitedError({ resource: bucket.resource, limit: bucket.max, windowS: bucket.windowMs / 1000, retryAfterS }),
    );
    return true;
  }

  private failOpen(error: unknown): false {
    this.warn(error);
    return false;
  }

  private bucket(request: FastifyRequest): Bucket | undefined | Promise<Bucket | undefined> {
    const principal = this.principals.ofRequest(request);
    if (principal instanceof Promise) return principal.then((resolved) => this.bucketOf(request, resolved));
    return this.bucketOf(request, principal);
  }

  private bucketOf(request: FastifyRequest, principal: Principal | Unresolved): Bucket | undefined | Promise<Bucket> {
    if (principal === 'missing' || principal === 'unknown' || principal === 'throttled') return undefined;
    // The operator's own tooling gets one generous budget of its own, never an app's.
    if (principal.kind === 'admin') return this.adminBucket;
    const { appId } = principal;
    const rates = this.rates.cached(appId);
    if (rates === undefined) return this.rates.of(appId).then((fetched) => this.appBucket(request, appId, fetched));
    return this.appBucket(request, appId, rates);
  }

  private appBucket(request: FastifyRequest, appId: string, rates: AppRates): Bucket {
    const { windowS, startWindowS } = this.config.rateLimit;
    const routeConfig = request.routeOptions.config as unknown as Partial<Record<typeof RATE_LIMIT_CONFIG_KEY, RateLimitClass>> | undefined;
    if (routeConfig?.[RATE_LIMIT_CONFIG_KEY] === 'start') {
      return {
        key: `app:${appId}:start:${request.method}:${request.routeOptions.url ?? ''}`,
        max: perWindow(rates.startsPerMinute, startWindowS),
        windowMs: startWindowS * 1000,
        resource: 'app.starts',
      };
    }
    // One bucket per app and rates, built once (a keyed request then builds no key string).
    const built = this.requestBuckets.get(appId);
    if (built !== undefined && built.rates === rates) return built.bucket;
    const bucket: Bucket = {
      key: `app:${appId}`,
      max: perWindow(rates.requestsPerMinute, windowS),
      windowMs: windowS * 1000,
      resource: 'app.requests',
    };
    if (built === undefined && this.requestBuckets.size >= MAX_WINDOWS)
      this.requestBuckets.delete(this.requestBuckets.keys().next().value!);
    this.requestBuckets.set(appId, { rates, bucket });
    return bucket;
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
