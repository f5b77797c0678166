import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUOTA_CLASSES, quotaClassesOf, type AppLimits, type QuotaClass } from './app-limits.js';
import type { NodeBudget } from './budget.js';
import { runtimeOf, WORKLOAD_KINDS, type WorkloadKind } from './costs.js';
import {
  checkGuarantees,
  guaranteeTake,
  guaranteeUnitCosts,
  guardGuarantees,
  runtimeHold,
  sumGuarantees,
  unusedGuarantee,
} from './guarantees.js';
import { DEFAULT_MODEL } from './model.js';
import { nodeCapacity } from './pool.js';
import { defaultLimits, effectiveLimits } from './quotas.js';
import { addLoad, LOAD_KEYS, scaleLoad, subtractLoad, sumLoads, ZERO_LOAD, type Load } from './resources.js';
import { partialLimitsArb } from './test-arbitraries.js';

const model = DEFAULT_MODEL;
const units = guaranteeUnitCosts(model);
/** NVENC sessions are placed per GPU, outside the pooled resources guarantees are made of. */
const KINDS = WORKLOAD_KINDS.filter((k) => k !== 'transcode.nvenc');

/** The workload that uses one class alone, to probe that a guarantee is really there. */
const PROBE: Readonly<Partial<Record<QuotaClass, WorkloadKind>>> = {
  streams: 'stream',
  viewers: 'viewer.webrtc',
  recordings: 'egress.track_composite',
  ingresses: 'ingress.rtmp',
  transcodes: 'transcode.cpu',
  cameras: 'camera.mjpeg',
  camera_viewers: 'camera.viewer',
};

type Held = { app: number; kind: WorkloadKind; count: number; charged: Load };
type State = { node: NodeBudget; used: Load; runtimes: number; apps: Record<QuotaClass, number>[]; held: Held[] };

const nodeArb: fc.Arbitrary<NodeBudget> = fc.record({
  id: fc.constant('node'),
  cpuMillicores: fc.integer({ min: 2_000, max: 16_000 }),
  ramMb: fc.integer({ min: 3_072, max: 16_384 }),
  nicMbps: fc.integer({ min: 100, max: 2_000 }),
  gpus: fc.constant([]),
});

const opArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('admit' as const),
      app: fc.nat(2),
      kind: fc.constantFrom(...KINDS),
      count: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('release' as const), pick: fc.nat() }) },
);

/** Accepts each app's guarantees only when they fit beside the ones accepted before, as the API does. */
function acceptedGuarantees(node: NodeBudget, wanted: readonly Partial<AppLimits>[]): Partial<AppLimits>[] {
  const accepted: Partial<AppLimits>[] = [];
  for (const g of wanted) accepted.push(checkGuarantees([node], model, accepted, g).ok ? g : {});
  return accepted;
}

/** One admission as the reserve script decides it: quota, the guarantee rule, then the node. */
function tryAdmit(state: State, guarantees: readonly Partial<AppLimits>[], app: number, kind: WorkloadKind, count: number) {
  const classes = quotaClassesOf(kind);
  const used = state.apps[app]!;
  const limits = effectiveLimits({ guarantees: guarantees[app]! }, defaultLimits([state.node], 'auto', { model }));
  if (classes.some((cls) => used[cls] + count > limits[cls])) return { ok: false as const, why: 'quota' };
  const runtime = runtimeOf(kind);
  const idle = runtime !== undefined && state.runtimes === 0 ? model.runtimes[runtime] : ZERO_LOAD;
  const take = guaranteeTake(guarantees[app]!, units, used, classes, count);
  const held = sumLoads(guarantees.map((g, i) => unusedGuarantee(g, units, state.apps[i]!)));
  const allocatable = nodeCapacity(state.node, model).allocatable;
  const down = state.runtimes === 0 && runtime === undefined;
  const ledger = { allocatable, used: state.used, held, runtimeHold: down ? runtimeHold(sumGuarantees(guarantees), model) : ZERO_LOAD };
  const guard = guardGuarantees(ledger, take, scaleLoad(model.costs[kind], count), idle);
  if (!guard.ok) return { ok: false as const, why: 'guaranteed' };
  if (LOAD_KEYS.some((k) => guard.charge[k] > 0 && state.used[k] + guard.charge[k] > allocatable[k]))
    return { ok: false as const, why: 'node' };
  return { ok: true as const, charge: guard.charge, charged: subtractLoad(guard.charge, idle), within: take.within };
}

describe(guardGuarantees.name, () => {
  it('never lets admitted work pass the node, and always admits an app inside its own guarantee', () => {
    fc.assert(
      fc.property(
        nodeArb,
        fc.array(partialLimitsArb(4), { minLength: 3, maxLength: 3 }),
        fc.array(opArb, { maxLength: 60 }),
        (node, wanted, ops) => {
          const guarantees = acceptedGuarantees(node, wanted);
          const zero = () => Object.fromEntries(QUOTA_CLASSES.map((c) => [c, 0])) as Record<QuotaClass, number>;
          const state: State = { node, used: ZERO_LOAD, runtimes: 0, apps: [zero(), zero(), zero()], held: [] };
          const allocatable = nodeCapacity(node, model).allocatable;
          for (const op of ops) {
            if (op.type === 'release') {
              const r = state.held.splice(op.pick % Math.max(1, state.held.length), 1)[0];
              if (r === undefined) continue;
              for (const cls of quotaClassesOf(r.kind)) state.apps[r.app]![cls] -= r.count;
              state.used = subtractLoad(state.used, r.charged);
              if (runtimeOf(r.kind) !== undefined && (state.runtimes -= r.count) === 0)
                state.used = subtractLoad(state.used, model.runtimes.egress);
            } else {
              const result = tryAdmit(state, guarantees, op.app, op.kind, op.count);
              if (!result.ok) continue;
              for (const cls of quotaClassesOf(op.kind)) state.apps[op.app]![cls] += op.count;
              state.used = addLoad(state.used, result.charge);
              if (runtimeOf(op.kind) !== undefined) state.runtimes += op.count;
              state.held.push({ app: op.app, kind: op.kind, count: op.count, charged: result.charged });
            }
            for (const k of LOAD_KEYS) expect(state.used[k]).toBeLessThanOrEqual(allocatable[k]);
            // Every unused guaranteed unit can be taken right now, whatever the others did.
            guarantees.forEach((g, app) => {
              for (const cls of QUOTA_CLASSES) {
                const probe = PROBE[cls];
                if (probe === undefined || (g[cls] ?? 0) <= state.apps[app]![cls]) continue;
                expect(tryAdmit(state, guarantees, app, probe, 1)).toMatchObject({ ok: true, within: true });
              }
            });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe(checkGuarantees.name, () => {
  it('accepts only guarantees whose total fits the pool, resource by resource', () => {
    fc.assert(
      fc.property(nodeArb, fc.array(partialLimitsArb(6), { minLength: 1, maxLength: 5 }), (node, wanted) => {
        const accepted = acceptedGuarantees(node, wanted);
        const total = addLoad(
          sumLoads(accepted.map((g) => sumLoads(QUOTA_CLASSES.map((cls) => scaleLoad(units[cls], g[cls] ?? 0))))),
          runtimeHold(sumGuarantees(accepted), model),
        );
        const allocatable = nodeCapacity(node, model).allocatable;
        for (const k of LOAD_KEYS) expect(total[k]).toBeLessThanOrEqual(allocatable[k]);
      }),
    );
  });
});
