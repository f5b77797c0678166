import { Inject, Injectable, Logger } from '@nestjs/common';
import { Admitter } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { CacheInvalidation, cacheOnBus, type InvalidatedCache } from '@tally/runtime';

export type AppRates = Readonly<{ requestsPerMinute: number; startsPerMinute: number }>;

/**
 * Each app's request and start rates, from the app's policy copy in Redis (the one admission reads,
 * ADR 0012), cached in process so the limiter adds no read per request. A PATCH of the app's rates
 * evicts the copy on every replica; while the invalidation channel is down nothing is served from
 * memory. When the policy cannot be read, the defaults apply (a Redis blip never fails a request).
 */
@Injectable()
export class AppRateLimits {
  private readonly cache: InvalidatedCache<AppRates>;
  private readonly logger = new Logger(AppRateLimits.name);

  constructor(
    private readonly admitter: Admitter,
    invalidation: CacheInvalidation,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    // The TTL is a backstop only: a changed rate reaches every replica at once.
    this.cache = cacheOnBus<AppRates>(invalidation, { max: 10_000, ttlMs: 30_000 }, (cache, change) => {
      if (change.kind === 'all') cache.forgetAll();
      else if (change.kind === 'policy' || change.kind === 'app') cache.forget(change.appId);
    });
  }

  /** The rates held in process, if any: every keyed request asks, so a hit costs no promise. */
  cached(appId: string): AppRates | undefined {
    return this.cache.get(appId);
  }

  async of(appId: string): Promise<AppRates> {
    const hit = this.cache.get(appId);
    if (hit) return hit;
    const generation = this.cache.begin();
    const defaults = this.config.rateLimit;
    let explicit: Partial<AppRates>;
    try {
      explicit = (await this.admitter.policyOf(appId)).rateLimits ?? {};
    } catch (error) {
      this.logger.warn(`reading the rate limits of ${appId} failed, using the defaults: ${String(error)}`);
      return { requestsPerMinute: defaults.requestsPerMinute, startsPerMinute: defaults.startsPerMinute };
    }
    const rates: AppRates = {
      requestsPerMinute: explicit.requestsPerMinute ?? defaults.requestsPerMinute,
      startsPerMinute: explicit.startsPerMinute ?? defaults.startsPerMinute,
    };
    this.cache.remember(appId, rates, generation);
    return rates;
  }
}
