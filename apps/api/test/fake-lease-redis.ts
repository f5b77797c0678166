import type { RedisConnection } from '@tally/runtime';

export type FakeLeaseRedis = {
  status: string;
  down: boolean;
  readonly counters: Map<string, number>;
  defineCommand(): void;
  tallyRateLease(key: string, want: number, max: number, windowMs: number): Promise<[number, number, number]>;
};

/**
 * Redis as the lease script (redis-leases.ts) uses it, for unit specs: a counter per key that never
 * resets, every window answering `elapsedMs` into itself, and failures while `down`.
 */
export function fakeLeaseRedis(elapsedMs: number): FakeLeaseRedis {
  const counters = new Map<string, number>();
  const redis: FakeLeaseRedis = {
    status: 'ready',
    down: false,
    counters,
    defineCommand: () => undefined,
    tallyRateLease(key, want, max, windowMs) {
      if (redis.down) return Promise.reject(new Error('Connection is closed.'));
      const used = counters.get(key) ?? 0;
      const granted = Math.max(0, Math.min(want, max - used));
      counters.set(key, used + granted);
      return Promise.resolve([granted, used + granted, windowMs - elapsedMs]);
    },
  };
  return redis;
}

export function asConnection(redis: FakeLeaseRedis): RedisConnection {
  return redis as unknown as RedisConnection;
}
