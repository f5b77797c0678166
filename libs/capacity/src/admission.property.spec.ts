import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admit, fits, release, type PoolState } from './admission.js';
import { QUOTA_CLASSES, unlimited, type AppLimits, type QuotaClass } from './app-limits.js';
import type { NodeBudget } from './budget.js';
import { WORKLOAD_KINDS, runtimeOf, type CostTable, type WorkloadKind } from './costs.js';
import { DEFAULT_MODEL, type CapacityModel } from './model.js';
import { admissibleDiskBytes, diskWatermarks } from './disk-watermarks.js';
import { acceptsKind, nodeCapacity } from './pool.js';
import { LOAD_KEYS, ZERO_LOAD } from './resources.js';
import { kindArb, nodesArb } from './test-arbitraries.js';
import { applyReservation, appUsageOf, EMPTY_USAGE, nodeUsageOf, type Reservation, type Usage } from './usage.js';

const TOLERANCE = 1e-6;
const MIB = 1024 * 1024;

/** Some nodes report one media filesystem, from nearly full to roomy, so disk refusals are explored too. */
const nodesWithDisksArb = (options: Parameters<typeof nodesArb>[0]): fc.Arbitrary<NodeBudget[]> =>
  nodesArb(options).chain((nodes) =>
    fc
      .array(
        fc.option(fc.record({ totalMb: fc.integer({ min: 16, max: 8_192 }), freeShare: fc.double({ min: 0, max: 1, noNaN: true }) })),
        {
          minLength: nodes.length,
          maxLength: nodes.length,
        },
      )
      .map((disks) =>
        nodes.map((node, i) => {
          const disk = disks[i];
          if (disk === null || disk === undefined) return node;
          const totalBytes = disk.totalMb * MIB;
          const freeBytes = Math.floor(totalBytes * disk.freeShare);
          return {
            ...node,
            disks: [{ key: `${node.id}:fs`, roles: ['recordings', 'hls', 'ladders', 'scratch'] as const, totalBytes, freeBytes }],
          };
        }),
      ),
  );

/** Written apart from the code under test: MB a filesystem may still be promised, and what `count` units reserve. */
function diskRoom(pool: PoolState, node: NodeBudget, kind: WorkloadKind, count: number): boolean {
  const disk = node.disks?.[0];
  const rate = pool.model.disk.writeBytesPerS[kind] ?? 0;
  if (disk === undefined || rate === 0 || !(kind.startsWith('egress.') || kind.startsWith('transcode.'))) return true;
  const perUnit = rate * pool.model.disk.horizonS * (1 + (pool.model.disk.finaliseFraction[kind] ?? 0));
  const need = Math.ceil((perUnit * count) / MIB);
  const limit = Math.floor(admissibleDiskBytes(disk.freeBytes, diskWatermarks(disk.totalBytes, pool.model.disk.watermarks)) / MIB);
  return (pool.usage.disks?.[disk.key] ?? 0) + need <= limit;
}

/** The default figures, each kind scaled by its own factor, so that odd and fractional costs are explored. */
const modelArb: fc.Arbitrary<CapacityModel> = fc
  .array(fc.double({ min: 0.25, max: 4, noNaN: true }), { minLength: WORKLOAD_KINDS.length, maxLength: WORKLOAD_KINDS.length })
  .map((factors) => {
    const costs = Object.fromEntries(
      WORKLOAD_KINDS.map((kind, i) => {
        const c = DEFAULT_MODEL.costs[kind];
        const f = factors[i] ?? 1;
        return [kind, { ramMb: c.ramMb * f, cpuMillicores: c.cpuMillicores * f, nicKbps: c.nicKbps * f, nvencSessions: c.nvencSessions }];
      }),
    ) as CostTable;
    return { ...DEFAULT_MODEL, costs };
  });

const limitsArb: fc.Arbitrary<AppLimits> = fc
  .array(fc.integer({ min: 0, max: 40 }), { minLength: QUOTA_CLASSES.length, maxLength: QUOTA_CLASSES.length })
  .map((values) => Object.fromEntries(QUOTA_CLASSES.map((cls, i) => [cls, values[i] ?? 0])) as Record<QuotaClass, number>);

type Op = { type: 'admit'; app: number; kind: WorkloadKind; count: number; pin: number | undefined } | { type: 'release'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('admit' as const),
      app: fc.nat(3),
      kind: kindArb,
      count: fc.integer({ min: 1, max: 4 }),
      pin: fc.option(fc.nat(4), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('release' as const), pick: fc.nat() }) },
);

/** Written apart from the code under test: can this node take `count` of `kind` right now? */
function couldHost(pool: PoolState, node: NodeBudget, kind: WorkloadKind, count: number): boolean {
  if (!acceptsKind(node, kind)) return false;
  const cap = nodeCapacity(node, pool.model);
  const used = nodeUsageOf(pool.usage, node.id);
  const runtime = runtimeOf(kind);
  const overhead = runtime !== undefined && (used.runtimes[runtime] ?? 0) === 0 ? pool.model.runtimes[runtime] : ZERO_LOAD;
  const cost = pool.model.costs[kind];
  for (const key of LOAD_KEYS) {
    const need = cost[key] * count + overhead[key];
    if (need > 0 && used.load[key] + need > cap.allocatable[key] + TOLERANCE) return false;
  }
  if (!diskRoom(pool, node, kind, count)) return false;
  const sessions = cost.nvencSessions * count;
  return sessions === 0 || cap.nvencSessions.some((limit, i) => (used.nvenc[i] ?? 0) + sessions <= limit);
}

function expectWithinBudgets(pool: PoolState, limits: readonly AppLimits[]): void {
  for (const node of pool.nodes) {
    const cap = nodeCapacity(node, pool.model);
    const used = nodeUsageOf(pool.usage, node.id);
    for (const key of LOAD_KEYS) expect(used.load[key]).toBeLessThanOrEqual(cap.allocatable[key] + TOLERANCE);
    used.nvenc.forEach((sessions, i) => expect(sessions).toBeLessThanOrEqual(cap.nvencSessions[i] ?? 0));
    for (const disk of node.disks ?? []) {
      const limit = Math.floor(admissibleDiskBytes(disk.freeBytes, diskWatermarks(disk.totalBytes, pool.model.disk.watermarks)) / MIB);
      expect(pool.usage.disks?.[disk.key] ?? 0).toBeLessThanOrEqual(limit);
    }
  }
  limits.forEach((appLimits, i) => {
    for (const cls of QUOTA_CLASSES) expect(appUsageOf(pool.usage, `app-${i}`, cls)).toBeLessThanOrEqual(appLimits[cls]);
  });
}

function expectSameUsage(actual: Usage, expected: Usage, nodes: readonly NodeBudget[]): void {
  for (const node of nodes) {
    const a = nodeUsageOf(actual, node.id);
    const e = nodeUsageOf(expected, node.id);
    for (const key of LOAD_KEYS) expect(a.load[key]).toBeCloseTo(e.load[key], 6);
    for (const disk of node.disks ?? []) expect(actual.disks?.[disk.key] ?? 0).toBe(expected.disks?.[disk.key] ?? 0);
  }
}

describe(admit.name, () => {
  it('never lets any sequence of admissions and releases exceed a node budget, its disk or an app quota', () => {
    fc.assert(
      fc.property(
        nodesWithDisksArb({ maxNodes: 3, maxRamMb: 16_384 }),
        modelArb,
        fc.array(limitsArb, { minLength: 4, maxLength: 4 }),
        fc.array(opArb, { minLength: 20, maxLength: 80, size: 'max' }),
        (nodes, model, limits, ops) => {
          let pool: PoolState = { nodes, model, usage: EMPTY_USAGE };
          let live: Reservation[] = [];
          for (const op of ops) {
            if (op.type === 'release') {
              const victim = live[op.pick % Math.max(1, live.length)];
              if (victim === undefined) continue;
              pool = { ...pool, usage: release(pool, victim) };
              live = live.filter((r) => r !== victim);
            } else {
              const appLimits = limits[op.app];
              if (appLimits === undefined) continue;
              const pinned = op.pin === undefined ? undefined : nodes[op.pin % nodes.length]?.id;
              const request = {
                appId: `app-${op.app}`,
                limits: appLimits,
                kind: op.kind,
                count: op.count,
                ...(pinned ? { nodeId: pinned } : {}),
              };
              const hosts = nodes.filter((n) => pinned === undefined || n.id === pinned);
              const result = admit(pool, request);
              if (result.ok) {
                const placedOn = nodes.find((n) => n.id === result.placement.reservation.nodeId);
                expect(placedOn && couldHost(pool, placedOn, op.kind, op.count)).toBe(true);
                pool = { ...pool, usage: result.usage };
                live.push(result.placement.reservation);
              } else if (result.refusal.code === 'capacity_exhausted') {
                // A refusal for capacity is only given when truly no node could take the request.
                expect(hosts.some((n) => couldHost(pool, n, op.kind, op.count))).toBe(false);
              } else {
                const { used, requested, limit } = result.refusal;
                expect(used + requested).toBeGreaterThan(limit);
              }
            }
            expectWithinBudgets(pool, limits);
            const replayed = live.reduce((u, r) => applyReservation(u, r, model), EMPTY_USAGE);
            expectSameUsage(pool.usage, replayed, nodes);
          }
          for (const r of live) pool = { ...pool, usage: release(pool, r) };
          expectSameUsage(pool.usage, EMPTY_USAGE, nodes);
        },
      ),
      { numRuns: 100 },
    );
  }, 60_000);

  it('admits whatever a refusal-free node could host, so capacity is not left idle', () => {
    fc.assert(
      fc.property(nodesWithDisksArb({}), kindArb, fc.integer({ min: 1, max: 3 }), (nodes, kind, count) => {
        const pool: PoolState = { nodes, model: DEFAULT_MODEL, usage: EMPTY_USAGE };
        const sut = fits(pool, { appId: 'app', limits: unlimited(), kind, count });
        expect(sut.ok).toBe(nodes.some((n) => couldHost(pool, n, kind, count)));
      }),
    );
  });
});
