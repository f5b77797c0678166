import { startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlotLedger } from './slot-ledger.js';

describe(SlotLedger.name, () => {
  let redis: TestRedis;
  const clients: Redis[] = [];
  let now = 1_000_000;
  const ledger = () => {
    const client = new Redis(redis.url);
    clients.push(client);
    return new SlotLedger(client, () => now);
  };

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    clients.forEach((c) => c.disconnect());
    await redis?.stop();
  });

  it('never grants more than the limit to concurrent reservers on separate connections', async () => {
    const ledgers = Array.from({ length: 8 }, ledger);

    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) => ledgers[i % 8]!.reserve('app_race', 'streams', `m${i}`, 25, 60_000)),
    );

    expect(results.filter((r) => r.granted)).toHaveLength(25);
    expect(results.filter((r) => !r.granted).every((r) => r.used === 25)).toBe(true);
    expect(await ledgers[0]!.usage('app_race', 'streams')).toBe(25);
  });

  it('lets an unconfirmed slot lapse, keeps a confirmed one, and frees on release', async () => {
    const sut = ledger();
    await sut.reserve('app_lapse', 'streams', 'a', 2, 1_000);
    await sut.reserve('app_lapse', 'streams', 'b', 2, 1_000);
    expect(await sut.confirm('app_lapse', 'streams', 'b')).toBe(true);
    expect((await sut.reserve('app_lapse', 'streams', 'c', 2, 1_000)).granted).toBe(false);

    now += 5_000;

    expect(await sut.usage('app_lapse', 'streams')).toBe(1);
    expect(await sut.confirm('app_lapse', 'streams', 'a')).toBe(false);
    expect(await sut.confirmedMembers('app_lapse', 'streams')).toEqual(['b']);
    await sut.release('app_lapse', 'streams', 'b');
    expect(await sut.usage('app_lapse', 'streams')).toBe(0);
  });

  it('treats a repeated reservation of the same member as one slot', async () => {
    const sut = ledger();
    await sut.reserve('app_idem', 'streams', 'x', 1, 60_000);
    expect(await sut.reserve('app_idem', 'streams', 'x', 1, 60_000)).toEqual({ granted: true, used: 1 });
    expect(await sut.usage('app_idem', 'streams')).toBe(1);
  });
});
