import type { Invalidation } from '@tally/contracts';
import { LRUCache } from 'lru-cache';

export type InvalidatedCacheOptions = Readonly<{
  /** Bounds memory; the least recently used entry goes first. */
  max: number;
  /** A backstop only: changes reach every process through the invalidation bus. */
  ttlMs: number;
  /** Whether invalidations can arrive now (CacheInvalidation.live): nothing is served or kept while they cannot. */
  live: () => boolean;
  now?: () => number;
}>;

/**
 * An in-process cache of rows that change elsewhere, on lru-cache: every process evicts an entry
 * when the invalidation bus says it changed (its owner calls `forget…` from CacheInvalidation's
 * listener), and serves nothing while the bus is down, since messages missed meanwhile are unknown.
 * A read that raced an invalidation is not kept: take `begin()` before reading and hand it to
 * `remember`, or let `read` do both.
 */
export class InvalidatedCache<V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<string, V>;
  /** Bumped by every invalidation. */
  private generation = 0;

  constructor(private readonly options: InvalidatedCacheOptions) {
    const now = options.now;
    this.entries = new LRUCache<string, V>({
      max: options.max,
      ttl: options.ttlMs,
      // lru-cache's default (1 ms) caches the clock and starts a 1 ms timer to forget it, once a
      // millisecond per cache while it is read: a timer per loop turn under load, and a wake-up of
      // an idle process after it. Reading the clock on each check costs less.
      ttlResolution: 0,
      ...(now ? { perf: { now } } : {}),
    });
  }

  get(key: string): V | undefined {
    return this.options.live() ? this.entries.get(key) : undefined;
  }

  /** The token to hand back to `remember` with what was read after taking it. */
  begin(): number {
    return this.generation;
  }

  remember(key: string, value: V, generation: number): void {
    if (generation !== this.generation || !this.options.live()) return;
    this.entries.set(key, value);
  }

  /** The cached value, or `load`'s (kept unless undefined or raced by an invalidation). */
  async read<R extends V | undefined>(key: string, load: () => Promise<R>): Promise<R | V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const generation = this.begin();
    const value = await load();
    if (value !== undefined) this.remember(key, value, generation);
    return value;
  }

  forget(key: string): void {
    this.generation += 1;
    this.entries.delete(key);
  }

  /** Forgets every entry whose value matches. */
  forgetWhere(matches: (value: V) => boolean): void {
    this.generation += 1;
    for (const [key, value] of this.entries.entries()) if (matches(value)) this.entries.delete(key);
  }

  forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
  }
}

/** What a cache needs of the invalidation bus (CacheInvalidation). */
export type InvalidationBus = Readonly<{ live: boolean; onChange(listener: (change: Invalidation) => void): void }>;

/**
 * A cache that serves while `bus` is live and hands every change on it to `evict`, which forgets
 * what the change makes stale.
 */
export function cacheOnBus<V extends NonNullable<unknown>>(
  bus: InvalidationBus,
  bounds: Pick<InvalidatedCacheOptions, 'max' | 'ttlMs'>,
  evict: (cache: InvalidatedCache<V>, change: Invalidation) => void,
): InvalidatedCache<V> {
  const cache = new InvalidatedCache<V>({ ...bounds, live: () => bus.live });
  bus.onChange((change) => evict(cache, change));
  return cache;
}
