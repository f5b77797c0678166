import { Injectable } from '@nestjs/common';
import { CacheInvalidation, type Invalidation } from '@tally/runtime';
import { KeysRepository } from '../keys/keys.repository.js';

export type ActiveKey = Readonly<{ id: string; appId: string }>;

/** Bounds memory when many distinct keys authenticate; the oldest entry goes first. */
const MAX_ENTRIES = 10_000;
/** A backstop only: revocation reaches every replica through CacheInvalidation within milliseconds. */
const TTL_MS = 60_000;

/**
 * Active API keys by hash, in process, so authentication reads Postgres once per key and minute
 * instead of on every request. Revoking a key or deleting its app evicts it on every replica
 * (CacheInvalidation); unknown and revoked keys are never cached.
 */
@Injectable()
export class ApiKeyCache {
  private readonly entries = new Map<string, { key: ActiveKey; expiresAt: number }>();
  /** Bumped by every invalidation: a lookup that raced one must not cache what it read. */
  private generation = 0;

  constructor(
    private readonly keys: KeysRepository,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onChange((change) => this.evict(change));
  }

  async findActive(hash: string): Promise<ActiveKey | undefined> {
    const now = Date.now();
    if (this.invalidation.live) {
      const hit = this.entries.get(hash);
      if (hit && hit.expiresAt > now) return hit.key;
    }
    const generation = this.generation;
    const row = await this.keys.findActiveByHash(hash);
    if (!row) return undefined;
    const key: ActiveKey = { id: row.id, appId: row.appId };
    if (generation === this.generation && this.invalidation.live) {
      this.entries.delete(hash);
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(hash, { key, expiresAt: now + TTL_MS });
    }
    return key;
  }

  private evict(change: Invalidation): void {
    if (change.kind === 'stream' || change.kind === 'policy') return;
    this.generation += 1;
    if (change.kind === 'all') {
      this.entries.clear();
      return;
    }
    for (const [hash, { key }] of this.entries) {
      if ((change.kind === 'key' && key.id === change.keyId) || (change.kind === 'app' && key.appId === change.appId))
        this.entries.delete(hash);
    }
  }
}
