import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUOTA_CLASSES } from './app-limits.js';
import { limitsOfApps } from './quotas.js';
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
