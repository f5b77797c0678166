import type { Config } from '@tally/config';
import type { RedisConnection } from '@tally/runtime';
import { startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_PENDING_TTL_S, IDEMPOTENCY_TTL_S, IdempotencyStore } from './idempotency.store.js';

describe(IdempotencyStore.name, () => {
  let redis: TestRedis;
  let connection: Redis;
  let sut: IdempotencyStore;

  beforeAll(async () => {
    redis = await startRedis();
    connection = new Redis(redis.url);
    sut = new IdempotencyStore(connection as RedisConnection, { secretsKey: undefined } as unknown as Config);
  });
  afterAll(async () => {
    connection?.disconnect();
    await redis?.stop();
  });

  const ttl = (key: string) => connection.ttl(`tally:idem:app_x:${key}`);

  it('holds a first request as in progress only briefly: a request that died with its process frees its key', async () => {
    expect(await sut.claim('app_x', 'died', 'f1')).toBeUndefined();

    expect(await ttl('died')).toBeGreaterThan(0);
    expect(await ttl('died')).toBeLessThanOrEqual(IDEMPOTENCY_PENDING_TTL_S);
    expect(await sut.claim('app_x', 'died', 'f1')).toEqual({ state: 'pending', fingerprint: 'f1' });
  });

  it('keeps a running request in progress while it renews, and keeps its response a day once done', async () => {
    await sut.claim('app_x', 'running', 'f2');
    await connection.expire('tally:idem:app_x:running', 2);

    expect(await sut.renew('app_x', 'running', 'f2')).toBe(true);
    expect(await ttl('running')).toBeGreaterThan(2);

    await sut.complete('app_x', 'running', 'f2', { id: 'str_1' });
    // A renewal arriving after the response was kept leaves the kept response's day alone.
    expect(await sut.renew('app_x', 'running', 'f2')).toBe(false);
    expect(await ttl('running')).toBeGreaterThan(IDEMPOTENCY_TTL_S - 60);
    expect(await sut.claim('app_x', 'running', 'f2')).toEqual({ state: 'done', fingerprint: 'f2', body: { id: 'str_1' } });
  });
});
