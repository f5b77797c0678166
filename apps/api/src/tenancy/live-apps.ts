import { Injectable } from '@nestjs/common';
import { CacheInvalidation, cacheOnBus, type InvalidatedCache } from '@tally/runtime';
import { AppsRepository } from './apps.repository.js';

/**
 * Whether an app exists and is not deleted, answered in process for the routes that only need to
 * know that (authorising an admin on an app's route, creating a stream, checking capacity), so they
 * do not read Postgres on every request. Deleting an app evicts it on every replica; apps not found
 * are never remembered, so a new app is found at once.
 */
@Injectable()
export class LiveApps {
  private readonly cache: InvalidatedCache<true>;

  constructor(
    private readonly apps: AppsRepository,
    invalidation: CacheInvalidation,
  ) {
    // The TTL is a backstop only: deleting an app reaches every replica within milliseconds.
    this.cache = cacheOnBus<true>(invalidation, { max: 10_000, ttlMs: 60_000 }, (cache, change) => {
      if (change.kind === 'all') cache.forgetAll();
      else if (change.kind === 'app') cache.forget(change.appId);
    });
  }

  async exists(appId: string): Promise<boolean> {
    return (await this.cache.read(appId, async () => ((await this.apps.find(appId)) ? true : undefined))) === true;
  }
}
