import { Injectable } from '@nestjs/common';
import { CacheInvalidation, cacheOnBus, type InvalidatedCache } from '@tally/runtime';
import { KeysRepository } from './keys.repository.js';

export type ActiveKey = Readonly<{ id: string; appId: string }>;

/**
 * Active API keys by hash, in process, so authentication reads Postgres once per key and minute
 * instead of on every request. Revoking a key or deleting its app evicts it on every replica
 * (CacheInvalidation); unknown and revoked keys are never cached.
 */
@Injectable()
export class ApiKeyCache {
  private readonly cache: InvalidatedCache<ActiveKey>;

  constructor(
    private readonly keys: KeysRepository,
    invalidation: CacheInvalidation,
  ) {
    // The TTL is a backstop only: revocation reaches every replica within milliseconds.
    this.cache = cacheOnBus<ActiveKey>(invalidation, { max: 10_000, ttlMs: 60_000 }, (cache, change) => {
      if (change.kind === 'all') cache.forgetAll();
      else if (change.kind === 'key') cache.forgetWhere((key) => key.id === change.keyId);
      else if (change.kind === 'app') cache.forgetWhere((key) => key.appId === change.appId);
    });
  }

  /** The key when this process has it cached (no Postgres query), else undefined. */
  cached(hash: string): ActiveKey | undefined {
    return this.cache.get(hash);
  }

  findActive(hash: string): Promise<ActiveKey | undefined> {
    return this.cache.read(hash, async () => {
      const row = await this.keys.findActiveByHash(hash);
      return row ? { id: row.id, appId: row.appId } : undefined;
    });
  }
}
