/** fast-check arbitraries shared by the property specs (not exported by the package). */
import fc from 'fast-check';
import { QUOTA_CLASSES, type AppLimits, type QuotaClass } from './app-limits.js';
import { JOINED_NODE_BASE_LOAD, type NodeBudget } from './budget.js';
import { WORKLOAD_KINDS, type WorkloadKind } from './costs.js';
import { EGRESS_MODES, type EgressModeSetting } from './egress-mode.js';
import type { AppQuotaPolicy } from './quotas.js';

/** From a 2 GB box to a 64-core GPU server, origin or joined, some refusing some kinds. */
export const nodesArb = ({ maxNodes = 4, maxRamMb = 65_536 } = {}): fc.Arbitrary<NodeBudget[]> =>
  fc
    .array(
      fc.record({
        cpuMillicores: fc.integer({ min: 1_000, max: (64_000 * maxRamMb) / 65_536 }),
        ramMb: fc.integer({ min: 2_048, max: maxRamMb }),
        nicMbps: fc.integer({ min: 50, max: 10_000 }),
        gpus: fc.array(fc.record({ nvencSessions: fc.integer({ min: 0, max: 8 }) }), { maxLength: 2 }),
        joined: fc.boolean(),
        accepts: fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.subarray([...WORKLOAD_KINDS]), weight: 1 }),
      }),
      { minLength: 1, maxLength: maxNodes },
    )
    .map((nodes) =>
      nodes.map(({ joined, accepts, ...budget }, i) => ({
        ...budget,
        id: `node-${i}`,
        ...(joined ? { baseLoad: JOINED_NODE_BASE_LOAD } : {}),
        ...(accepts === undefined ? {} : { accepts }),
      })),
    );

export const kindArb: fc.Arbitrary<WorkloadKind> = fc.constantFrom(...WORKLOAD_KINDS);

export const partialLimitsArb = (max: number): fc.Arbitrary<Partial<AppLimits>> =>
  fc
    .array(fc.tuple(fc.constantFrom(...QUOTA_CLASSES), fc.integer({ min: 0, max })), { maxLength: 3 })
    .map((pairs) => Object.fromEntries(pairs) as Partial<Record<QuotaClass, number>>);

export const appPoliciesArb = (options: { explicit: boolean; maxApps?: number }): fc.Arbitrary<AppQuotaPolicy[]> =>
  fc
    .array(
      fc.record({
        limits: options.explicit ? fc.option(partialLimitsArb(6), { nil: undefined }) : fc.constant(undefined),
        guarantees: fc.option(partialLimitsArb(4), { nil: undefined }),
        egressMode: fc.constantFrom<EgressModeSetting>('auto', ...EGRESS_MODES),
      }),
      { minLength: 1, maxLength: options.maxApps ?? 6 },
    )
    .map((apps) =>
      apps.map(({ limits, guarantees, egressMode }, i) => ({
        appId: `app-${i}`,
        egressMode,
        ...(limits === undefined ? {} : { limits }),
        ...(guarantees === undefined ? {} : { guarantees }),
      })),
    );
