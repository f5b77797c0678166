import {
  admissibleDiskMb,
  DEFAULT_MODEL,
  diskReservationMb,
  diskWatermarks,
  EMPTY_USAGE,
  fits,
  unlimited,
  type NodeBudget,
  type NodeDisk,
  type Placement,
} from '@tally/capacity';
import { startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admitter } from './admitter.js';
import { policiesFrom } from './admitter.types.js';
import { CapacityLedger } from './capacity-ledger.js';
import { capsOnly } from './capacity-ledger.types.js';

const MB = 1024 * 1024;
const LAPSE_MS = 60_000;
const ROLES = ['recordings', 'hls', 'ladders', 'scratch'] as const;
/** What one passthrough recording reserves with the default rates and horizon. */
const PER_RECORDING_MB = diskReservationMb(DEFAULT_MODEL.disk, 'egress.passthrough');

function node(id: string, disk: NodeDisk): NodeBudget {
  return { id, cpuMillicores: 64_000, ramMb: 65_536, nicMbps: 100_000, gpus: [], disks: [disk] };
}

/** A 100 GB filesystem whose free space above its stop watermark is `admissibleMb`. */
function filesystem(key: string, admissibleMb: number): NodeDisk {
  const totalBytes = 100 * 1024 * MB;
  return { key, roles: ROLES, totalBytes, freeBytes: diskWatermarks(totalBytes).stopFreeBytes + admissibleMb * MB };
}

describe(`${CapacityLedger.name} disk`, () => {
  let redis: TestRedis;
  const connections: Redis[] = [];

  const ledgerOn = () => {
    const connection = new Redis(redis.url);
    connections.push(connection);
    return new CapacityLedger(connection);
  };
  const admitterFor = (nodes: NodeBudget[]) =>
    new Admitter(
      ledgerOn(),
      {
        liveNodes: () => Promise.resolve(nodes),
        schedulableNodes: () => Promise.resolve(nodes),
        ...policiesFrom(() => Promise.resolve([{ appId: 'app_d', limits: { recordings: 1_000 } }])),
      },
      DEFAULT_MODEL,
    );

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const c of connections) c.disconnect();
    await redis?.stop();
  });

  it('never lets concurrent reservations of a stale placement pass the admissible MB of a filesystem', async () => {
    const disk = filesystem('n1:8:1', 7 * PER_RECORDING_MB + 500);
    const n1 = node('n1', disk);
    const limit = admissibleDiskMb(disk, DEFAULT_MODEL.disk.watermarks);
    const room = Math.floor(limit / PER_RECORDING_MB);
    // Every placement is decided on the empty pool, as if every replica read the counters at once.
    const decision = fits(
      { nodes: [n1], model: DEFAULT_MODEL, usage: EMPTY_USAGE },
      { appId: 'app_d', limits: unlimited(), kind: 'egress.passthrough' },
    );
    if (!decision.ok) throw new Error(decision.refusal.resource);
    const placement: Placement = decision.placement;
    const ledgers = Array.from({ length: 4 }, ledgerOn);

    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        ledgers[i % ledgers.length]!.reserve(`stale-${i}`, placement, capsOnly(unlimited()), [], LAPSE_MS),
      ),
    );

    const admitted = outcomes.filter((o) => o.ok);
    expect(admitted).toHaveLength(room);
    for (const refused of outcomes.filter((o) => !o.ok)) {
      expect(refused).toEqual({
        ok: false,
        code: 'capacity_exhausted',
        resource: 'node.disk',
        nodeId: 'n1',
        limit,
        used: room * PER_RECORDING_MB,
        requested: PER_RECORDING_MB,
      });
    }
    const usage = await ledgers[0]!.usage(['n1'], []);
    expect(usage.disks?.[disk.key]).toBe(room * PER_RECORDING_MB);

    for (let i = 0; i < 40; i += 1) await ledgers[0]!.release(`stale-${i}`);
    expect((await ledgers[0]!.usage(['n1'], [])).disks?.[disk.key]).toBe(0);
  });

  it('refuses through the Admitter with node.disk, limit, used and requested in MB', async () => {
    const disk = filesystem('n2:8:1', 3 * PER_RECORDING_MB + 100);
    const replicas = [admitterFor([node('n2', disk)]), admitterFor([node('n2', disk)])];
    const limit = admissibleDiskMb(disk, DEFAULT_MODEL.disk.watermarks);
    const room = Math.floor(limit / PER_RECORDING_MB);

    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => replicas[i % 2]!.admit(`rec-${i}`, 'app_d', 'egress.passthrough', 1, LAPSE_MS)),
    );

    expect(results.filter((r) => r.ok)).toHaveLength(room);
    const refusals = results.flatMap((r) => (r.ok ? [] : [r.refusal]));
    expect(refusals.length).toBe(12 - room);
    for (const refusal of refusals) {
      expect(refusal).toMatchObject({ code: 'capacity_exhausted', resource: 'node.disk', limit, requested: PER_RECORDING_MB });
      expect(refusal.used + refusal.requested).toBeGreaterThan(refusal.limit);
    }
    const check = await replicas[0]!.check('app_d', 'egress.passthrough', 1);
    expect(check).toMatchObject({ admitted: false, refusal: { resource: 'node.disk', limit, used: room * PER_RECORDING_MB } });
  });

  it('gives running work its reservation back past the limit after Redis lost it, and new writers see it', async () => {
    const disk = filesystem('n3:8:1', PER_RECORDING_MB - 1);
    const n3 = node('n3', disk);
    const sut = admitterFor([n3]);

    expect(await sut.restore('running', 'app_d', 'egress.passthrough', 1, { nodeId: 'n3' })).toBe(true);

    expect((await ledgerOn().usage(['n3'], [])).disks?.[disk.key]).toBe(PER_RECORDING_MB);
    const refused = await sut.admit('new', 'app_d', 'egress.track', 1, LAPSE_MS);
    expect(refused).toMatchObject({ ok: false, refusal: { resource: 'node.disk', used: PER_RECORDING_MB } });
  });

  it('shares one counter between nodes that mount the same filesystem', async () => {
    const shared = filesystem('shared:media', 4 * PER_RECORDING_MB + 100);
    const pool = [node('a', shared), node('b', shared)];
    const limit = admissibleDiskMb(shared, DEFAULT_MODEL.disk.watermarks);
    const room = Math.floor(limit / PER_RECORDING_MB);
    const sut = [admitterFor(pool), admitterFor(pool)];

    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => sut[i % 2]!.admit(`shared-${i}`, 'app_d', 'egress.passthrough', 1, LAPSE_MS)),
    );

    expect(results.filter((r) => r.ok)).toHaveLength(room);
    expect(new Set(results.flatMap((r) => (r.ok ? [r.nodeId] : []))).size).toBeGreaterThanOrEqual(1);
    const usage = await ledgerOn().usage(['a', 'b'], []);
    expect(usage.disks?.['shared:media']).toBe(room * PER_RECORDING_MB);
  });
});
