import type { CacheInvalidation, Invalidation } from '@tally/runtime';

/** CacheInvalidation at its adapter, for unit tests of the in-process caches that listen to it. */
export function fakeInvalidation() {
  let listener: (change: Invalidation) => void = () => {};
  const bus = { live: true, onChange: (l: (change: Invalidation) => void) => (listener = l) };
  return {
    invalidation: bus as unknown as CacheInvalidation,
    /** Whether the subscription is up (caches must not serve while it is down). */
    bus: bus as { live: boolean },
    evict: (change: Invalidation) => listener(change),
  };
}

/** A repository read that can be held open, to race an invalidation against it. */
export function holdableRead() {
  let pending: (() => void) | undefined;
  let hold = false;
  return {
    /** Awaited inside the fake read: returns at once unless `holdNext` was called. */
    gate: async () => {
      if (hold) await new Promise<void>((resolve) => (pending = resolve));
    },
    holdNext: () => (hold = true),
    release: () => {
      hold = false;
      pending?.();
    },
  };
}
