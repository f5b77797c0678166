import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUOTA_CLASSES } from './app-limits.js';
import { DEFAULT_MODEL } from './model.js';
import { DEFAULT_QUOTA_SIZING, deriveQuotas, nodeUnits, type AppQuotaPolicy, type DerivedQuotas } from './quotas.js';
import { appPoliciesArb, nodesArb } from './test-arbitraries.js';
import type { NodeBudget } from './budget.js';

/** Σ over apps of limit / the pool's units of that app's reference workload, per class. */
function poolShares(nodes: readonly NodeBudget[], apps: readonly AppQuotaPolicy[], sut: DerivedQuotas) {
  return QUOTA_CLASSES.map((cls) => {
    let share = 0;
    for (const app of apps) {
      const units = nodeUnits(cls, nodes, DEFAULT_MODEL, DEFAULT_QUOTA_SIZING, app.egressMode ?? 'auto').reduce((a, b) => a + b, 0);
      const limit = sut.limits[app.appId]?.[cls] ?? Number.NaN;
      share += units === 0 ? (limit === 0 ? 0 : Number.POSITIVE_INFINITY) : limit / units;
    }
    return { cls, share };
  });
}

describe(deriveQuotas.name, () => {
  it('never derives quotas that together exceed the pool, class by class', () => {
    fc.assert(
      fc.property(nodesArb(), appPoliciesArb({ explicit: false }), (nodes, apps) => {
        const sut = deriveQuotas(nodes, apps);
        // Guarantees beyond the pool are scaled down, so the sum holds with or without warnings.
        for (const { share } of poolShares(nodes, apps, sut)) expect(share).toBeLessThanOrEqual(1 + 1e-9);
      }),
    );
  });

  it('keeps the derived quotas within what explicit limits leave, when those fit', () => {
    fc.assert(
      fc.property(nodesArb(), appPoliciesArb({ explicit: true }), (nodes, apps) => {
        const sut = deriveQuotas(nodes, apps);
        fc.pre(!sut.warnings.some((w) => w.startsWith('explicit')));
        for (const { share } of poolShares(nodes, apps, sut)) expect(share).toBeLessThanOrEqual(1 + 1e-9);
      }),
    );
  });

  it('gives a pool of identical workloads no more units than its nodes can run', () => {
    fc.assert(
      fc.property(nodesArb(), fc.integer({ min: 1, max: 12 }), (nodes, count) => {
        const apps = Array.from({ length: count }, (_, i) => ({ appId: `app-${i}` }));
        const sut = deriveQuotas(nodes, apps);
        for (const cls of QUOTA_CLASSES) {
          const pool = nodeUnits(cls, nodes, DEFAULT_MODEL, DEFAULT_QUOTA_SIZING, 'auto').reduce((a, b) => a + b, 0);
          const sum = apps.reduce((s, a) => s + (sut.limits[a.appId]?.[cls] ?? 0), 0);
          expect(sum).toBeLessThanOrEqual(pool);
        }
      }),
    );
  });

  it('honours every guarantee when the guarantees fit', () => {
    fc.assert(
      fc.property(nodesArb(), appPoliciesArb({ explicit: false }), (nodes, apps) => {
        const sut = deriveQuotas(nodes, apps);
        fc.pre(sut.warnings.length === 0);
        for (const app of apps) {
          for (const cls of QUOTA_CLASSES) {
            expect(sut.limits[app.appId]?.[cls]).toBeGreaterThanOrEqual(app.guaranteed?.[cls] ?? 0);
          }
        }
      }),
    );
  });

  it('never raises an existing app’s quota when another app is created', () => {
    fc.assert(
      fc.property(nodesArb(), appPoliciesArb({ explicit: true, maxApps: 7 }), (nodes, apps) => {
        const before = deriveQuotas(nodes, apps.slice(0, -1));
        const after = deriveQuotas(nodes, apps);
        for (const app of apps.slice(0, -1)) {
          for (const cls of QUOTA_CLASSES) {
            expect(after.limits[app.appId]?.[cls]).toBeLessThanOrEqual(before.limits[app.appId]?.[cls] ?? 0);
          }
        }
      }),
    );
  });
});
