import type { App } from '@tally/db';
import { describe, expect, it } from 'vitest';
import type { CacheInvalidation, Invalidation } from '../infra/invalidation.js';
import type { AppsRepository } from './apps.repository.js';
import { LiveApps } from './live-apps.js';

function setup() {
  const rows = new Set(['app_1']);
  let reads = 0;
  let pending: (() => void) | undefined;
  let block = false;
  const repository = {
    async find(appId: string) {
      reads += 1;
      const row = rows.has(appId) ? ({ id: appId } as App) : null;
      if (block) await new Promise<void>((resolve) => (pending = resolve));
      return row;
    },
  } as unknown as AppsRepository;
  let listener: (change: Invalidation) => void = () => {};
  const bus = { live: true, onChange: (l: (change: Invalidation) => void) => (listener = l) } as unknown as CacheInvalidation;
  return {
    sut: new LiveApps(repository, bus),
    rows,
    reads: () => reads,
    evict: (change: Invalidation) => listener(change),
    blockNextRead: () => (block = true),
    release: () => {
      block = false;
      pending?.();
    },
    bus: bus as { live: boolean },
  };
}

describe('LiveApps', () => {
  it('reads an app once, then answers from memory until the app is deleted', async () => {
    const t = setup();
    expect(await t.sut.exists('app_1')).toBe(true);
    expect(await t.sut.exists('app_1')).toBe(true);
    expect(t.reads()).toBe(1);
    t.rows.delete('app_1');
    t.evict({ kind: 'app', appId: 'app_1' });
    expect(await t.sut.exists('app_1')).toBe(false);
  });

  it('never remembers an app it did not find, so a new app is found at once', async () => {
    const t = setup();
    expect(await t.sut.exists('app_2')).toBe(false);
    t.rows.add('app_2');
    expect(await t.sut.exists('app_2')).toBe(true);
  });

  it('forgets everything when invalidations may have been missed, and serves nothing while they cannot arrive', async () => {
    const t = setup();
    await t.sut.exists('app_1');
    t.evict({ kind: 'all' });
    await t.sut.exists('app_1');
    expect(t.reads()).toBe(2);
    t.bus.live = false;
    await t.sut.exists('app_1');
    await t.sut.exists('app_1');
    expect(t.reads()).toBe(4);
  });

  it('does not remember an app read while its deletion arrived', async () => {
    const t = setup();
    t.blockNextRead();
    const racing = t.sut.exists('app_1');
    t.rows.delete('app_1');
    t.evict({ kind: 'app', appId: 'app_1' });
    t.release();
    expect(await racing).toBe(true);
    expect(await t.sut.exists('app_1')).toBe(false);
  });
});
