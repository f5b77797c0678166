import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUOTA_CLASSES } from './app-limits.js';
import { defaultLimits, limitsOfApps, nodeUnits, shareOfNode, DEFAULT_QUOTA_SIZING } from './quotas.js';
import { DEFAULT_MODEL } from './model.js';
import { EGRESS_MODES } from './egress-mode.js';
import { appPoliciesArb, nodesArb } from './test-arbitraries.js';

describe(limitsOfApps.name, () => {
  it('never shrinks an app’s cap when other apps are created', () => {
    fc.assert(
      fc.property(nodesArb(), appPoliciesArb({ explicit: true, maxApps: 8 }), fc.integer({ min: 1, max: 200 }), (nodes, apps, extra) => {
        const crowd = Array.from({ length: extra }, (_, i) => ({ appId: `new-${i}` }));
        const before = limitsOfApps(nodes, apps.slice(0, 1));
        const after = limitsOfApps(nodes, [...apps, ...crowd]);
        for (const cls of QUOTA_CLASSES) expect(after['app-0']?.[cls]).toBe(before['app-0']?.[cls]);
      }),
    );
  });

  it('never shrinks a derived cap when a node joins', () => {
    fc.assert(
      fc.property(nodesArb({ maxNodes: 3 }), nodesArb({ maxNodes: 1 }), (nodes, joining) => {
        const before = limitsOfApps(nodes, [{ appId: 'a' }]);
        const after = limitsOfApps([...nodes, ...joining.map((n) => ({ ...n, id: `joined-${n.id}` }))], [{ appId: 'a' }]);
        for (const cls of QUOTA_CLASSES) expect(after['a']?.[cls]).toBeGreaterThanOrEqual(before['a']?.[cls] ?? 0);
      }),
    );
  });

  it('keeps every cap at or above the app’s guarantee', () => {
    fc.assert(
      fc.property(nodesArb(), appPoliciesArb({ explicit: true }), (nodes, apps) => {
        const sut = limitsOfApps(nodes, apps);
        for (const app of apps) {
          for (const cls of QUOTA_CLASSES) expect(sut[app.appId]?.[cls]).toBeGreaterThanOrEqual(app.guarantees?.[cls] ?? 0);
        }
      }),
    );
  });
});

describe(defaultLimits.name, () => {
  it('gives at least 1 of every class the largest node runs once, and never more than that node runs', () => {
    fc.assert(
      fc.property(nodesArb(), fc.constantFrom(...EGRESS_MODES, 'auto' as const), (nodes, mode) => {
        const sut = defaultLimits(nodes, mode);
        for (const cls of QUOTA_CLASSES) {
          const largest = Math.max(0, ...nodeUnits(cls, nodes, DEFAULT_MODEL, DEFAULT_QUOTA_SIZING, mode));
          if (largest >= 1) expect(sut[cls]).toBeGreaterThanOrEqual(1);
          else expect(sut[cls]).toBe(0);
          expect(sut[cls]).toBeLessThanOrEqual(Math.max(largest, 0));
        }
      }),
    );
  });
});

describe(shareOfNode.name, () => {
  it('is monotonic in what the node runs and never exceeds it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 1, max: 16 }),
        (a, b, apps) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(shareOfNode(lo, apps)).toBeLessThanOrEqual(shareOfNode(hi, apps));
          expect(shareOfNode(hi, apps)).toBeLessThanOrEqual(hi);
        },
      ),
    );
  });
});
