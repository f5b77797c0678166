import { describe, expect, it } from 'vitest';
import { InvalidatedCache } from './invalidated-cache.js';

describe(InvalidatedCache.name, () => {
  const setup = (max = 10) => {
    const state = { live: true, now: 1_000 };
    const sut = new InvalidatedCache<{ v: number; appId: string }>({ max, ttlMs: 60_000, live: () => state.live, now: () => state.now });
    return { sut, state };
  };

  it('serves what it was given until the entry is forgotten', () => {
    const { sut } = setup();
    sut.remember('a', { v: 1, appId: 'app_1' }, sut.begin());
    expect(sut.get('a')).toEqual({ v: 1, appId: 'app_1' });
    sut.forget('a');
    expect(sut.get('a')).toBeUndefined();
  });

  it('does not keep a read that raced a change, nor serve while invalidations cannot arrive', () => {
    const { sut, state } = setup();
    const before = sut.begin();
    sut.forget('a');
    sut.remember('a', { v: 1, appId: 'app_1' }, before);
    expect(sut.get('a')).toBeUndefined();

    sut.remember('a', { v: 2, appId: 'app_1' }, sut.begin());
    state.live = false;
    expect(sut.get('a')).toBeUndefined();
    state.live = true;
    sut.forgetAll();
    expect(sut.get('a')).toBeUndefined();
  });

  it('reads through once, and keeps nothing for a missing row', async () => {
    const { sut } = setup();
    let reads = 0;
    const load = () => Promise.resolve(++reads > 0 ? { v: reads, appId: 'app_1' } : undefined);
    expect(await sut.read('a', load)).toEqual({ v: 1, appId: 'app_1' });
    expect(await sut.read('a', load)).toEqual({ v: 1, appId: 'app_1' });
    expect(await sut.read('missing', () => Promise.resolve(undefined))).toBeUndefined();
    expect(sut.get('missing')).toBeUndefined();
  });

  it('forgets the entries of one app', () => {
    const { sut } = setup();
    sut.remember('a', { v: 1, appId: 'app_1' }, sut.begin());
    sut.remember('b', { v: 2, appId: 'app_2' }, sut.begin());
    sut.forgetWhere((value) => value.appId === 'app_1');
    expect(sut.get('a')).toBeUndefined();
    expect(sut.get('b')).toEqual({ v: 2, appId: 'app_2' });
  });

  it('lets an entry expire as a backstop, and drops the least recently used past its bound', () => {
    const { sut, state } = setup(2);
    sut.remember('a', { v: 1, appId: 'app_1' }, sut.begin());
    sut.remember('b', { v: 2, appId: 'app_1' }, sut.begin());
    sut.get('a');
    sut.remember('c', { v: 3, appId: 'app_1' }, sut.begin());
    expect(sut.get('b')).toBeUndefined();
    expect(sut.get('a')).toBeDefined();
    state.now += 61_000;
    expect(sut.get('a')).toBeUndefined();
  });
});
