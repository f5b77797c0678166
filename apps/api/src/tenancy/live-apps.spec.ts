import type { App } from '@tally/db';
import { describe, expect, it } from 'vitest';
import { fakeInvalidation, holdableRead } from '../../test/fake-invalidation.js';
import type { AppsRepository } from './apps.repository.js';
import { LiveApps } from './live-apps.js';

function setup() {
  const rows = new Set(['app_1']);
  let reads = 0;
  const read = holdableRead();
  const repository = {
    async find(appId: string) {
      reads += 1;
      const row = rows.has(appId) ? ({ id: appId } as App) : null;
      await read.gate();
      return row;
    },
  } as unknown as AppsRepository;
  const { invalidation, bus, evict } = fakeInvalidation();
  return {
    sut: new LiveApps(repository, invalidation),
    rows,
    reads: () => reads,
    evict,
    blockNextRead: read.holdNext,
    release: read.release,
    bus,
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
