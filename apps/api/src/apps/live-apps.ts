import { Injectable } from '@nestjs/common';
import { CacheInvalidation, type Invalidation } from '@tally/runtime';
import { AppsRepository } from './apps.repository.js';

/** Bounds memory on a platform with many apps; the oldest entry goes first. */
const MAX_ENTRIES = 10_000;
/** A backstop only: deleting an app reaches every replica through CacheInvalidation within milliseconds. */
const TTL_MS = 60_000;

/**
 * Whether an app exists and is not deleted, answered in process for the routes that only need to
 * know that (authorising an admin on an app's route, creating a stream, checking capacity), so they
 * do not read Postgres on every request. Deleting an app evicts it on every replica; apps not found
 * are never remembered, so a new app is found at once.
 */
@Injectable()
export class LiveApps {
  private readonly expiresAt = new Map<string, number>();
  /** Bumped by every invalidation: a lookup that raced one must not remember what it read. */
  private generation = 0;

  constructor(
    private readonly apps: AppsRepository,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onChange((change) => this.evict(change));
  }

  async exists(appId: string): Promise<boolean> {
    const now = Date.now();
    if (this.invalidation.live && (this.expiresAt.get(appId) ?? 0) > now) return true;
    const generation = this.generation;
    if (!(await this.apps.find(appId))) return false;
    if (generation === this.generation && this.invalidation.live) {
      this.expiresAt.delete(appId);
      if (this.expiresAt.size >= MAX_ENTRIES) this.expiresAt.delete(this.expiresAt.keys().next().value!);
      this.expiresAt.set(appId, now + TTL_MS);
    }
    return true;
  }

  private evict(change: Invalidation): void {
    if (change.kind !== 'app' && change.kind !== 'all') return;
    this.generation += 1;
    if (change.kind === 'all') this.expiresAt.clear();
    else this.expiresAt.delete(change.appId);
  }
}
