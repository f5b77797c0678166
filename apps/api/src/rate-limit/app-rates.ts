import { Inject, Injectable, Logger } from '@nestjs/common';
import { Admitter } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { CacheInvalidation, type Invalidation } from '@tally/runtime';

export type AppRates = Readonly<{ requestsPerMinute: number; startsPerMinute: number }>;

/** A backstop only: a changed rate reaches every replica through CacheInvalidation at once. */
const TTL_MS = 30_000;

/**
 * Each app's request and start rates, from the app's policy copy in Redis (the one admission reads,
 * ADR 0012), cached in process so the limiter adds no read per request. A PATCH of the app's rates
 * evicts the copy on every replica; while the invalidation channel is down nothing is served from
 * memory. When the policy cannot be read, the defaults apply (a Redis blip never fails a request).
 */
@Injectable()
export class AppRateLimits {
  private readonly entries = new Map<string, { rates: AppRates; expiresAt: number }>();
  private generation = 0;
  private readonly logger = new Logger(AppRateLimits.name);

  constructor(
    private readonly admitter: Admitter,
    private readonly invalidation: CacheInvalidation,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    invalidation.onChange((change) => this.evict(change));
  }

  /** The rates held in process, if any: every keyed request asks, so a hit costs no promise. */
  cached(appId: string): AppRates | undefined {
    if (!this.invalidation.live) return undefined;
    const hit = this.entries.get(appId);
    return hit && hit.expiresAt > Date.now() ? hit.rates : undefined;
  }

  async of(appId: string): Promise<AppRates> {
    const hit = this.cached(appId);
    if (hit) return hit;
    const now = Date.now();
    const generation = this.generation;
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
    if (generation === this.generation && this.invalidation.live) this.entries.set(appId, { rates, expiresAt: now + TTL_MS });
    return rates;
  }

  private evict(change: Invalidation): void {
    if (change.kind === 'key' || change.kind === 'stream') return;
    this.generation += 1;
    if (change.kind === 'all') this.entries.clear();
    else this.entries.delete(change.appId);
  }
}
