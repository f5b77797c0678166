import { type AppQuotaPolicy, DEFAULT_MODEL, maxConcurrent, type NodeBudget } from '@tally/capacity';
import { startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admitter, CHECK_FRESH_MS } from './admitter.js';
import { policiesFrom, type PoolSource } from './admitter.types.js';
import { cameraUnitCost } from './camera-cost.js';
import { CapacityLedger } from './capacity-ledger.js';
import { toStoredPolicy } from './app-policy.js';
import type { PolicyCache } from './policy-cache.js';

/** A 4 vCPU / 4 GB node: room for a handful of track-composite recordings. */
const NODE: NodeBudget = { id: 'node-a', cpuMillicores: 4_000, ramMb: 4_096, nicMbps: 1_000, gpus: [] };

describe(Admitter.name, () => {
  let redis: TestRedis;
  const connections: Redis[] = [];
  let now = 1_000_000;

  const admitter = (policies: PoolSource['appPolicies'], nodes: NodeBudget[] = [NODE]) => {
    const connection = new Redis(redis.url);
    connections.push(connection);
    const ledger = new CapacityLedger(connection, () => now);
    return {
      sut: new Admitter(
        ledger,
        { liveNodes: () => Promise.resolve(nodes), schedulableNodes: () => Promise.resolve(nodes), ...policiesFrom(policies) },
        DEFAULT_MODEL,
      ),
      ledger,
    };
  };

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    connections.forEach((c) => c.disconnect());
    await redis?.stop();
  });

  it('never passes a node budget or an app quota under 1000 concurrent reservations on separate connections', async () => {
    const apps = ['app_a', 'app_b', 'app_c'];
    const policies = () => Promise.resolve(apps.map((appId) => ({ appId, limits: { recordings: 3 } })));
    const workers = Array.from({ length: 6 }, () => admitter(policies));
    const fitOnNode = maxConcurrent('egress.track_composite', NODE);
    expect(fitOnNode).toBeGreaterThan(3);
    expect(fitOnNode).toBeLessThan(9);

    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        workers[i % 6]!.sut.admit(`rec-${i}`, apps[i % 3]!, 'egress.track_composite', 1, 60_000).then((r) => ({ appId: apps[i % 3]!, r })),
      ),
    );

    const admitted = results.filter((x) => x.r.ok);
    expect(admitted.length).toBe(Math.min(fitOnNode, 9));
    for (const appId of apps) expect(admitted.filter((x) => x.appId === appId).length).toBeLessThanOrEqual(3);
    const resources = new Set(results.flatMap((x) => (x.r.ok ? [] : [x.r.refusal.resource])));
    expect([...resources].every((r) => r === 'app.recordings' || r === 'node.ram' || r === 'node.cpu')).toBe(true);
    const usage = await workers[0]!.ledger.usage([NODE.id], apps);
    const headroom = await workers[0]!.sut.headroom();
    expect(usage.nodes[NODE.id]!.load.ramMb).toBeLessThanOrEqual(headroom[0]!.allocatable.ramMb);
    expect(usage.nodes[NODE.id]!.load.cpuMillicores).toBeLessThanOrEqual(headroom[0]!.allocatable.cpuMillicores);

    for (const x of results) if (x.r.ok) await workers[1]!.ledger.release(`rec-${results.indexOf(x)}`);
    const after = await workers[0]!.ledger.usage([NODE.id], apps);
    expect(after.nodes[NODE.id]!.load).toEqual({ ramMb: 0, cpuMillicores: 0, nicKbps: 0 });
    expect(Object.values(after.apps).every((a) => Object.values(a).every((n) => n === 0))).toBe(true);
  });

  it('names the resource that ran out', async () => {
    const { sut } = admitter(() => Promise.resolve([{ appId: 'app_q', limits: { streams: 1 } }]));
    expect((await sut.admit('s1', 'app_q', 'stream', 1, 60_000)).ok).toBe(true);

    const refused = await sut.admit('s2', 'app_q', 'stream', 1, 60_000);

    expect(refused).toEqual({ ok: false, refusal: { code: 'quota_exceeded', resource: 'app.streams', limit: 1, used: 1, requested: 1 } });
    const tiny = admitter(
      () => Promise.resolve([{ appId: 'app_t', limits: { recordings: 5, room_composites: 5 } }]),
      [{ id: 'tiny', cpuMillicores: 8_000, ramMb: 2_500, nicMbps: 1_000, gpus: [] }],
    );
    const chrome = await tiny.sut.admit('rc1', 'app_t', 'egress.room_composite', 1, 60_000);
    expect(chrome).toMatchObject({ ok: false, refusal: { code: 'capacity_exhausted', resource: 'node.ram', nodeId: 'tiny' } });
  });

  it('lets a reservation nobody confirmed lapse, keeps a confirmed one, and releases idempotently', async () => {
    const { sut, ledger } = admitter(() => Promise.resolve([{ appId: 'app_l', limits: { streams: 5 } }]));
    await sut.admit('lapsing', 'app_l', 'stream', 1, 1_000);
    await sut.admit('kept', 'app_l', 'stream', 1, 1_000);
    expect(await ledger.confirm('kept')).toBe(true);

    now += 5_000;

    expect((await sut.appUsage('app_l'))['streams']).toBe(1);
    expect(await ledger.confirm('lapsing')).toBe(false);
    expect(await ledger.release('kept')).toBe(true);
    expect(await ledger.release('kept')).toBe(false);
    expect((await sut.appUsage('app_l'))['streams']).toBe(0);
  });

  it('treats a repeated reservation id as the one it already holds', async () => {
    const { sut } = admitter(() => Promise.resolve([{ appId: 'app_i', limits: { streams: 1 } }]));
    expect((await sut.admit('same', 'app_i', 'stream', 1, 60_000)).ok).toBe(true);
    expect((await sut.admit('same', 'app_i', 'stream', 1, 60_000)).ok).toBe(true);
    expect((await sut.appUsage('app_i'))['streams']).toBe(1);
  });

  it('restores running work past its quota on the node it is pinned to, at its own cost, but never over a pending reservation', async () => {
    const pinned: NodeBudget = { ...NODE, id: 'node-pinned' };
    const { sut, ledger } = admitter(
      () => Promise.resolve([{ appId: 'app_r', limits: { cameras: 0 } }]),
      [{ ...NODE, id: 'node-other' }, pinned],
    );
    const unitCost = cameraUnitCost(DEFAULT_MODEL, 'camera.mjpeg', { maxFps: 10, maxFrameKb: 100 });

    expect(await sut.restore('cam-running', 'app_r', 'camera.mjpeg', 1, { nodeId: pinned.id, unitCost })).toBe(true);

    expect(await ledger.held('cam-running')).toMatchObject({ nodeId: pinned.id, confirmed: true });
    expect((await ledger.usage([pinned.id], [])).nodes[pinned.id]!.load.nicKbps).toBe(8_192);
    const pending = admitter(() => Promise.resolve([{ appId: 'app_p', limits: { streams: 1 } }]));
    expect((await pending.sut.admit('being-created', 'app_p', 'stream', 1, 60_000)).ok).toBe(true);
    expect(await sut.restore('being-created', 'app_p', 'stream', 1)).toBe(false);
    expect(await ledger.held('being-created')).toMatchObject({ confirmed: false });
    expect((await sut.appUsage('app_p'))['streams']).toBe(1);
  });

  it('with policies kept in process, decides a refusal again on a fresh read, and answers checks from the copy until told', async () => {
    const source = new Map([['app_c', { appId: 'app_c', limits: { streams: 1 } }]]);
    const connection = new Redis(redis.url);
    connections.push(connection);
    const ledger = new CapacityLedger(connection, () => now);
    const policies = keptPolicies();
    const sut = new Admitter(
      ledger,
      {
        liveNodes: () => Promise.resolve([NODE]),
        schedulableNodes: () => Promise.resolve([NODE]),
        ...policiesFrom(() => Promise.resolve([...source.values()])),
      },
      DEFAULT_MODEL,
      { policies },
    );
    await sut.syncPolicy('app_c');
    expect((await sut.admit('c-1', 'app_c', 'stream', 1, 60_000)).ok).toBe(true);

    // Another replica raises the cap: this one's copy still says 1, but the reserve script reads the
    // ledger's policy, and a refusal is never decided on a copy (the fresh read also renews the copy).
    source.set('app_c', { appId: 'app_c', limits: { streams: 3 } });
    await ledger.writePolicy('app_c', toStoredPolicy(source.get('app_c')!, DEFAULT_MODEL));
    expect((await sut.admit('c-2', 'app_c', 'stream', 1, 60_000)).ok).toBe(true);
    expect(await sut.check('app_c', 'stream', 1)).toMatchObject({ admitted: true });

    // It lowers it again: the reservation refuses at once; a check answers from the copy until told.
    source.set('app_c', { appId: 'app_c', limits: { streams: 2 } });
    await ledger.writePolicy('app_c', toStoredPolicy(source.get('app_c')!, DEFAULT_MODEL));
    expect(await sut.check('app_c', 'stream', 1)).toMatchObject({ admitted: true });
    expect(await sut.admit('c-3', 'app_c', 'stream', 1, 60_000)).toMatchObject({
      ok: false,
      refusal: { code: 'quota_exceeded', resource: 'app.streams', limit: 2, used: 2 },
    });
    policies.forget('app_c');
    expect(await sut.check('app_c', 'stream', 1)).toMatchObject({ admitted: false, refusal: { resource: 'app.streams', limit: 2 } });
    for (const id of ['c-1', 'c-2']) await ledger.release(id);
  });

  it('answers a check from counters at most CHECK_FRESH_MS old: another replica’s reservation shows once that passes, its own at once', async () => {
    const replica = () => {
      const connection = new Redis(redis.url);
      connections.push(connection);
      const ledger = new CapacityLedger(connection, () => now);
      const pool = { liveNodes: () => Promise.resolve([NODE]), schedulableNodes: () => Promise.resolve([NODE]) };
      const policies = policiesFrom(() => Promise.resolve([{ appId: 'app_f', limits: { streams: 2 } }]));
      return { ledger, sut: new Admitter(ledger, { ...pool, ...policies }, DEFAULT_MODEL, { now: () => now }) };
    };
    const a = replica();
    const b = replica();
    expect((await a.sut.admit('f-1', 'app_f', 'stream', 1, 60_000)).ok).toBe(true);
    expect(await a.sut.check('app_f', 'stream', 1)).toMatchObject({ admitted: true });

    // Replica B takes the last unit: A's next check within the bound answers from its earlier read...
    expect((await b.sut.admit('f-2', 'app_f', 'stream', 1, 60_000)).ok).toBe(true);
    now += CHECK_FRESH_MS - 1;
    expect(await a.sut.check('app_f', 'stream', 1)).toMatchObject({ admitted: true });
    // ...and once it has passed, reads again and says no; admission itself never admitted a third.
    now += 1;
    expect(await a.sut.check('app_f', 'stream', 1)).toMatchObject({ admitted: false, refusal: { resource: 'app.streams', used: 2 } });
    expect((await a.sut.admit('f-3', 'app_f', 'stream', 1, 60_000)).ok).toBe(false);

    // A release through A's own ledger shows in A's next check at once, without waiting for the bound.
    expect(await a.ledger.release('f-2')).toBe(true);
    expect(await a.sut.check('app_f', 'stream', 1)).toMatchObject({ admitted: true });
    expect((await a.sut.admit('f-4', 'app_f', 'stream', 1, 60_000)).ok).toBe(true);
    expect(await a.sut.check('app_f', 'stream', 1)).toMatchObject({ admitted: false, refusal: { resource: 'app.streams', used: 2 } });
    for (const id of ['f-1', 'f-4']) await a.ledger.release(id);
  });

  /** The pool's counters span every node, so these tests start from an empty ledger. */
  const emptyLedger = async () => {
    const client = new Redis(redis.url);
    connections.push(client);
    await client.flushall();
  };

  it('keeps an app’s unused guarantee free while others fill the node, and gives it back exactly', async () => {
    await emptyLedger();
    const policies = () =>
      Promise.resolve([
        { appId: 'app_vip', limits: { recordings: 10 }, guarantees: { recordings: 2 } },
        { appId: 'app_busy', limits: { recordings: 50 } },
      ]);
    const { sut, ledger } = admitter(policies, [{ ...NODE, id: 'node-g' }]);
    await sut.syncAllPolicies();
    const busy: string[] = [];
    for (let i = 0; ; i += 1) {
      const r = await sut.admit(`busy-${i}`, 'app_busy', 'egress.track_composite', 1, 60_000);
      if (!r.ok) {
        expect(r.refusal).toMatchObject({ code: 'capacity_exhausted', resource: 'pool.guaranteed', heldResource: 'node.ram' });
        break;
      }
      busy.push(`busy-${i}`);
    }
    expect(busy.length).toBe(maxConcurrent('egress.track_composite', NODE) - 2);
    expect(await sut.check('app_busy', 'egress.track_composite', 1)).toMatchObject({
      admitted: false,
      refusal: { resource: 'pool.guaranteed' },
    });
    expect(await sut.check('app_vip', 'egress.track_composite', 2)).toMatchObject({ admitted: true });
    for (const id of ['vip-1', 'vip-2']) expect((await sut.admit(id, 'app_vip', 'egress.track_composite', 1, 60_000)).ok).toBe(true);
    expect((await sut.admit('vip-3', 'app_vip', 'egress.track_composite', 1, 60_000)).ok).toBe(false);
    const full = (await ledger.pool()).held;
    expect(full).toEqual({ ramMb: 0, cpuMillicores: 0, nicKbps: 0 });
    await ledger.release('vip-1');
    expect((await ledger.pool()).held.ramMb).toBe(300);
    expect((await sut.admit('busy-late', 'app_busy', 'egress.track_composite', 1, 60_000)).ok).toBe(false);
    expect((await sut.admit('vip-again', 'app_vip', 'egress.track_composite', 1, 60_000)).ok).toBe(true);
    for (const id of [...busy, 'vip-2', 'vip-again']) await ledger.release(id);
    const after = await ledger.pool();
    expect(after.used).toEqual({ ramMb: 0, cpuMillicores: 0, nicKbps: 0 });
    expect(after.held.ramMb).toBe(600);
    expect(after.guaranteed.recordings).toBe(2);
  });

  it('restores the ledger’s copy of guaranteed apps after Redis lost it, so their guarantees hold again', async () => {
    await emptyLedger();
    const { sut, ledger } = admitter(() => Promise.resolve([{ appId: 'app_g', guarantees: { streams: 3 } }, { appId: 'app_plain' }]));
    expect(await sut.restoreGuaranteePolicies()).toBe(1);
    expect(await ledger.pool()).toMatchObject({ guaranteed: { streams: 3 }, held: { nicKbps: 3 * 2_500 } });
    expect(await sut.restoreGuaranteePolicies()).toBe(0);
    expect((await ledger.pool()).held.nicKbps).toBe(3 * 2_500);
  });

  it('keeps every key the scripts write under one hash tag, so one cluster slot holds an admission', async () => {
    await emptyLedger();
    const { sut, ledger } = admitter(() => Promise.resolve([{ appId: 'app_k', guarantees: { streams: 1 } }]));
    await sut.syncPolicy('app_k');
    expect((await sut.admit('key-1', 'app_k', 'egress.track', 1, 60_000)).ok).toBe(true);
    const client = new Redis(redis.url);
    connections.push(client);
    const keys = await client.keys('*');
    expect(keys).toEqual(expect.arrayContaining(['tally:{cap}:res:key-1', 'tally:{cap}:policy:app_k', 'tally:{cap}:pool']));
    expect(new Set(keys.map(hashTag))).toEqual(new Set(['cap']));
    await ledger.release('key-1');
  });
});

/** The part of a key Redis Cluster hashes: the text between the first `{` and the next `}`. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

/** Policies kept in process as the runtime's InvalidatedCache keeps them, with `forget` standing in for an invalidation. */
function keptPolicies(): PolicyCache & { forget(appId: string): void } {
  const entries = new Map<string, AppQuotaPolicy>();
  let generation = 0;
  return {
    get: (appId) => entries.get(appId),
    begin: () => generation,
    remember: (appId, policy, at) => void (at === generation && entries.set(appId, policy)),
    forget: (appId) => {
      generation += 1;
      entries.delete(appId);
    },
  };
}
