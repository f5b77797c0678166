import type { Admitter } from '@tally/admission';
import type { AppQuotaPolicy } from '@tally/capacity';
import type { Config } from '@tally/config';
import { describe, expect, it } from 'vitest';
import type { CacheInvalidation, Invalidation } from '@tally/runtime';
import { AppRateLimits } from './app-rates.js';

const defaults = { requestsPerMinute: 6000, startsPerMinute: 60, adminPerMinute: 60_000, windowS: 10, startWindowS: 5 };

function setup() {
  const policies = new Map<string, AppQuotaPolicy>([['app_1', { appId: 'app_1', rateLimits: { startsPerMinute: 12 } }]]);
  let reads = 0;
  let failing = false;
  const admitter = {
    policyOf(appId: string) {
      reads += 1;
      return failing ? Promise.reject(new Error('redis down')) : Promise.resolve(policies.get(appId) ?? { appId });
    },
  } as unknown as Admitter;
  let listener: (change: Invalidation) => void = () => {};
  const bus = { live: true, onChange: (l: (change: Invalidation) => void) => (listener = l) } as unknown as CacheInvalidation;
  const sut = new AppRateLimits(admitter, bus, { rateLimit: defaults } as unknown as Config);
  return { sut, policies, reads: () => reads, fail: (f: boolean) => (failing = f), evict: (c: Invalidation) => listener(c) };
}

describe(AppRateLimits.name, () => {
  it('fills what the operator did not set from the defaults, and reads each app once until its policy changes', async () => {
    const t = setup();
    expect(await t.sut.of('app_1')).toEqual({ requestsPerMinute: 6000, startsPerMinute: 12 });
    expect(await t.sut.of('app_1')).toEqual({ requestsPerMinute: 6000, startsPerMinute: 12 });
    expect(t.reads()).toBe(1);

    t.policies.set('app_1', { appId: 'app_1', rateLimits: { requestsPerMinute: 30 } });
    t.evict({ kind: 'policy', appId: 'app_2' });
    expect((await t.sut.of('app_1')).requestsPerMinute).toBe(6000);
    t.evict({ kind: 'policy', appId: 'app_1' });
    expect(await t.sut.of('app_1')).toEqual({ requestsPerMinute: 30, startsPerMinute: 60 });
  });

  it('answers the defaults, without keeping them, when the policy cannot be read', async () => {
    const t = setup();
    t.fail(true);
    expect(await t.sut.of('app_1')).toEqual({ requestsPerMinute: 6000, startsPerMinute: 60 });
    t.fail(false);
    expect(await t.sut.of('app_1')).toEqual({ requestsPerMinute: 6000, startsPerMinute: 12 });
  });
});
