import { DEFAULT_MODEL, type NodeBudget } from '@tally/capacity';
import { startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admitter } from './admitter.js';
import { policiesFrom } from './admitter.types.js';
import { CapacityLedger } from './capacity-ledger.js';

const NODE: NodeBudget = { id: 'node-a', cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] };
const LEASE_MS = 10_000;

describe(`${CapacityLedger.name} leases`, () => {
  let redis: TestRedis;
  let connection: Redis;
  let ledger: CapacityLedger;
  let admitter: Admitter;
  let now = 5_000_000;

  beforeAll(async () => {
    redis = await startRedis();
    connection = new Redis(redis.url);
    ledger = new CapacityLedger(connection, () => now);
    const nodes = [NODE];
    admitter = new Admitter(
      ledger,
      {
        liveNodes: () => Promise.resolve(nodes),
        schedulableNodes: () => Promise.resolve(nodes),
        ...policiesFrom(() => Promise.resolve([{ appId: 'app_v', limits: { camera_viewers: 10, streams: 10 } }])),
      },
      DEFAULT_MODEL,
    );
  });
  afterAll(async () => {
    connection?.disconnect();
    await redis?.stop();
  });

  const viewers = async () => (await admitter.appUsage('app_v'))['camera_viewers'] ?? 0;
  const nic = async () => (await ledger.usage([NODE.id], [])).nodes[NODE.id]!.load.nicKbps;

  it('keeps a renewed lease past its lapse, frees one nobody renews, and never revives a lapsed one', async () => {
    for (const id of ['kept', 'orphan']) expect((await admitter.admit(id, 'app_v', 'camera.viewer', 1, LEASE_MS)).ok).toBe(true);
    expect(await viewers()).toBe(2);
    const nicPerViewer = (await nic()) / 2;
    expect(nicPerViewer).toBeGreaterThan(0);

    for (let step = 0; step < 5; step += 1) {
      now += LEASE_MS / 2;
      expect(await ledger.renew(['kept'], LEASE_MS)).toEqual([]);
    }

    expect(await viewers()).toBe(1);
    expect(await nic()).toBe(nicPerViewer);
    expect(await ledger.held('kept')).toMatchObject({ kind: 'camera.viewer', confirmed: false });
    expect(await ledger.held('orphan')).toBeUndefined();
    expect(await ledger.renew(['orphan', 'kept', 'never-taken'], LEASE_MS)).toEqual(['orphan', 'never-taken']);
    expect(await viewers()).toBe(1);

    now += LEASE_MS + 1;
    expect(await ledger.renew(['kept'], LEASE_MS)).toEqual(['kept']);
    expect(await viewers()).toBe(0);
    expect(await nic()).toBe(0);
  });

  it('reports a released lease as gone and leaves reservations it was not given alone', async () => {
    await admitter.admit('lease', 'app_v', 'camera.viewer', 1, LEASE_MS);
    await admitter.admit('stream-pending', 'app_v', 'stream', 1, LEASE_MS * 3);
    await admitter.admit('stream-confirmed', 'app_v', 'stream', 1, LEASE_MS);
    expect(await ledger.confirm('stream-confirmed')).toBe(true);
    expect(await ledger.release('lease')).toBe(true);

    expect(await ledger.renew(['lease', 'stream-confirmed'], LEASE_MS)).toEqual(['lease', 'stream-confirmed']);
    expect(await ledger.held('stream-confirmed')).toMatchObject({ confirmed: true });
    now += LEASE_MS * 2;
    expect((await admitter.appUsage('app_v'))['streams']).toBe(2);
    now += LEASE_MS * 2;
    expect((await admitter.appUsage('app_v'))['streams']).toBe(1);
    expect(await ledger.held('stream-confirmed')).toBeDefined();
  });

  it('never shortens a lease and renews thousands in one call', async () => {
    const ids = Array.from({ length: 2_500 }, (_, i) => `many-${i}`);
    const seeds = ids.slice(0, 3);
    for (const id of seeds) await admitter.admit(id, 'app_v', 'camera.viewer', 1, LEASE_MS * 4);
    expect(await ledger.renew(seeds, LEASE_MS)).toEqual([]);
    now += LEASE_MS * 2;
    expect(await viewers()).toBe(3);

    const lost = await ledger.renew(ids, LEASE_MS);
    expect(lost).toEqual(ids.slice(3));
    now += LEASE_MS * 2 + 1;
    expect(await viewers()).toBe(0);
  });
});
