import type { Config } from '@tally/config';
import { describe, expect, it } from 'vitest';
import { RateLimitMetrics } from './rate-limit.metrics.js';
import { asConnection, fakeLeaseRedis } from '../../test/fake-lease-redis.js';
import { AuthFailureGate } from '../tenancy/auth-failure-gate.js';
import { AuthFailureLimiter } from './auth-failures.js';

function setup(authFailuresPerMinute = 3) {
  const redis = fakeLeaseRedis(12_300);
  const metrics = new RateLimitMetrics();
  const config = { rateLimit: { authFailuresPerMinute } } as unknown as Config;
  const replica = (gate = new AuthFailureGate()) => new AuthFailureLimiter(asConnection(redis), metrics, gate, config);
  return { redis, metrics, replica };
}

describe(AuthFailureLimiter.name, () => {
  it('lets a client fail its limit of times, then refuses with rate_limited naming the budget and when to retry', async () => {
    const t = setup(3);
    const sut = t.replica();
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await sut.refusal('198.51.100.7'));

    expect(answers.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(answers[3]?.code).toBe('rate_limited');
    expect(answers[3]?.rate).toEqual({ resource: 'client.auth_failures', limit: 3, windowS: 60, retryAfterS: 48 });
    expect((await t.metrics.counter.get()).values).toEqual([{ labels: { resource: 'client.auth_failures' }, value: 1 }]);
  });

  it('counts each client address apart, one shared counter for every replica', async () => {
    const t = setup(2);
    const [a, b] = [t.replica(), t.replica()];
    expect(await a.refusal('198.51.100.7')).toBeUndefined();
    expect(await b.refusal('198.51.100.7')).toBeUndefined();

    expect((await a.refusal('198.51.100.7'))?.code).toBe('rate_limited');
    expect((await b.refusal('198.51.100.7'))?.code).toBe('rate_limited');
    expect(await b.refusal('2001:db8::1')).toBeUndefined();
    expect(t.redis.counters.get('tally:rl:auth:198.51.100.7')).toBe(2);
  });

  it('fails open while Redis is down: a bad key gets its plain 401, never a 500 or a 429', async () => {
    const t = setup(1);
    const sut = t.replica();
    t.redis.down = true;
    expect([await sut.refusal('198.51.100.7'), await sut.refusal('198.51.100.7')]).toEqual([undefined, undefined]);
    t.redis.status = 'reconnecting';
    expect(await sut.refusal('198.51.100.7')).toBeUndefined();
  });

  it('counts an IPv6 client per /64 and an IPv4-mapped address as its IPv4 address', async () => {
    const t = setup(2);
    const sut = t.replica();
    expect(await sut.refusal('2001:db8:aa:bb::1')).toBeUndefined();
    expect(await sut.refusal('2001:db8:aa:bb:ffff:1:2:3')).toBeUndefined();
    expect((await sut.refusal('2001:db8:aa:bb::99'))?.code).toBe('rate_limited');
    expect(await sut.refusal('2001:db8:aa:bc::1')).toBeUndefined();
    expect(await sut.refusal('::ffff:198.51.100.9')).toBeUndefined();
    expect(await sut.refusal('198.51.100.9')).toBeUndefined();
    expect((await sut.refusal('::ffff:198.51.100.9'))?.code).toBe('rate_limited');
    expect(t.redis.counters.get('tally:rl:auth:2001:db8:aa:bb::/64')).toBe(2);
  });

  it('remembers a refused client for the rest of its window, so the next bad key is refused before any lookup', async () => {
    const t = setup(1);
    const gate = new AuthFailureGate();
    const sut = t.replica(gate);
    expect(sut.refusedBeforeLookup('198.51.100.7')).toBeUndefined();
    await sut.refusal('198.51.100.7');
    await sut.refusal('198.51.100.7');
    expect(sut.refusedBeforeLookup('198.51.100.7')?.rate).toMatchObject({ resource: 'client.auth_failures', limit: 1, windowS: 60 });
    expect(sut.refusedBeforeLookup('198.51.100.8')).toBeUndefined();
  });
});
