import { describe, expect, it } from 'vitest';
import { type Count, type LeaseBackend, LeasedCounter, leaseSize } from './leased-counter.js';

/** The shared counter as the Redis script keeps it, on a clock the test moves; counts its round trips. */
function sharedCounter() {
  let now = 0;
  let calls = 0;
  let failing = false;
  const windows = new Map<string, { used: number; endsAt: number }>();
  const backend: LeaseBackend = {
    lease(key, want, max, windowMs) {
      calls += 1;
      if (failing) return Promise.reject(new Error('Connection is closed.'));
      let window = windows.get(key);
      if (!window || window.endsAt <= now) windows.set(key, (window = { used: 0, endsAt: now + windowMs }));
      const granted = Math.max(0, Math.min(want, max - window.used));
      window.used += granted;
      return Promise.resolve({ granted, used: window.used, ttlMs: window.endsAt - now });
    },
  };
  const replica = (maxWindows?: number) => new LeasedCounter(backend, () => now, maxWindows);
  return {
    replica,
    calls: () => calls,
    used: (key: string) => windows.get(key)?.used ?? 0,
    advance: (ms: number) => (now += ms),
    fail: (f: boolean) => (failing = f),
  };
}

const admitted = (counts: Count[], max: number) => counts.filter((c) => c.current <= max).length;

describe(LeasedCounter.name, () => {
  it('counts a small limit exactly across replicas: one round trip per request, the next one refused on either', async () => {
    const shared = sharedCounter();
    const replicas = [shared.replica(), shared.replica()];
    const counts: Count[] = [];
    for (let i = 0; i < 6; i += 1) counts.push(await replicas[i % 2]!.take('app:a', 60_000, 6));

    expect(counts.map((c) => c.current)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(shared.calls()).toBe(6);
    for (const replica of replicas) expect((await replica.take('app:a', 60_000, 6)).current).toBe(7);
    // Once the counter said the window is full, a replica refuses without asking again.
    expect((await replicas[0]!.take('app:a', 60_000, 6)).current).toBe(7);
    expect(shared.calls()).toBe(8);
    expect(shared.used('app:a')).toBe(6);
  });

  it('spends leases in process: one round trip per lease, and never more than the limit across replicas', async () => {
    const shared = sharedCounter();
    const max = 1_000;
    expect(leaseSize(max)).toBe(10);
    const replicas = [shared.replica(), shared.replica(), shared.replica()];
    const counts: Count[] = [];
    for (let i = 0; i < 2_000; i += 1) counts.push(await replicas[i % 3]!.take('app:a', 10_000, max));

    expect(admitted(counts, max)).toBeLessThanOrEqual(max);
    // What other replicas hold unspent is at most one lease each.
    expect(admitted(counts, max)).toBeGreaterThanOrEqual(max - 2 * leaseSize(max));
    expect(shared.used('app:a')).toBe(max);
    expect(shared.calls()).toBeLessThan(2_000 / leaseSize(max) + 10);
  });

  it('answers synchronously while the replica holds units of the window', async () => {
    const shared = sharedCounter();
    const replica = shared.replica();
    await replica.take('app:a', 10_000, 10_000);
    const next = replica.take('app:a', 10_000, 10_000);
    expect(next).not.toBeInstanceOf(Promise);
    expect(next).toEqual({ current: 2, ttlMs: 10_000 });
  });

  it('shares one lease request among the requests that ran out together', async () => {
    const shared = sharedCounter();
    const replica = shared.replica();
    const counts = await Promise.all(Array.from({ length: 150 }, async () => replica.take('app:a', 10_000, 1_000_000)));

    expect(counts.map((c) => c.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    expect(shared.calls()).toBe(2);
  });

  it('opens a new window when the last one ended, and tells how long the refusal lasts', async () => {
    const shared = sharedCounter();
    const replica = shared.replica();
    await replica.take('app:a', 5_000, 1);
    shared.advance(1_000);
    expect(await replica.take('app:a', 5_000, 1)).toEqual({ current: 2, ttlMs: 4_000 });

    shared.advance(4_000);
    expect(await replica.take('app:a', 5_000, 1)).toEqual({ current: 1, ttlMs: 5_000 });
  });

  it('asks again at once when the limit changes, even in a window it found full', async () => {
    const shared = sharedCounter();
    const replica = shared.replica();
    await replica.take('app:a', 60_000, 2);
    await replica.take('app:a', 60_000, 2);
    expect((await replica.take('app:a', 60_000, 2)).current).toBe(3);

    expect(await replica.take('app:a', 60_000, 1_000)).toMatchObject({ current: 3 });
    expect((await replica.take('app:a', 60_000, 1)).current).toBe(2);
  });

  it('keeps budgets apart', async () => {
    const shared = sharedCounter();
    const replica = shared.replica();
    await replica.take('app:a', 60_000, 1);
    expect((await replica.take('app:a', 60_000, 1)).current).toBe(2);
    expect((await replica.take('app:b', 60_000, 1)).current).toBe(1);
  });

  it('fails every waiter when the shared counter cannot be reached, and asks again on the next request', async () => {
    const shared = sharedCounter();
    const replica = shared.replica();
    shared.fail(true);
    const waiting = [0, 1].map(async () => replica.take('app:a', 60_000, 5));
    await expect(Promise.all(waiting)).rejects.toThrow('Connection is closed.');
    shared.fail(false);
    expect(await replica.take('app:a', 60_000, 5)).toMatchObject({ current: 1 });
  });

  it('tracks at most its cap of windows, the oldest going first, and still counts every key in the shared counter', async () => {
    const t = sharedCounter();
    const sut = t.replica(100);
    for (let i = 0; i < 1_000; i += 1) await sut.take(`auth:198.51.${i >> 8}.${i & 255}`, 60_000, 5);
    expect(sut.size).toBe(100);
    // An evicted key's window lives on in the shared counter: its next request is counted there.
    expect((await sut.take('auth:198.51.0.0', 60_000, 5)).current).toBe(2);
    expect(t.used('auth:198.51.0.0')).toBe(2);
    expect(sut.size).toBe(100);
  });
});
