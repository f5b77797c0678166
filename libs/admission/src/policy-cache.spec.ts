import { describe, expect, it } from 'vitest';
import { PolicyCache } from './policy-cache.js';

describe(PolicyCache.name, () => {
  const policy = (maxStreams: number) => ({ appId: 'app_1', limits: { streams: maxStreams } });

  it('serves what it was given until the app is forgotten', () => {
    const sut = new PolicyCache(() => true);
    sut.remember('app_1', policy(1), sut.begin());
    expect(sut.get('app_1')).toEqual(policy(1));
    sut.forget('app_1');
    expect(sut.get('app_1')).toBeUndefined();
  });

  it('does not keep a read that raced a change, nor serve while invalidations cannot arrive', () => {
    let live = true;
    const sut = new PolicyCache(() => live);
    const before = sut.begin();
    sut.forget('app_1');
    sut.remember('app_1', policy(1), before);
    expect(sut.get('app_1')).toBeUndefined();

    sut.remember('app_1', policy(2), sut.begin());
    live = false;
    expect(sut.get('app_1')).toBeUndefined();
    live = true;
    sut.forgetAll();
    expect(sut.get('app_1')).toBeUndefined();
  });

  it('lets an entry expire as a backstop', () => {
    let now = 0;
    const sut = new PolicyCache(
      () => true,
      () => now,
    );
    sut.remember('app_1', policy(1), sut.begin());
    now += 61_000;
    expect(sut.get('app_1')).toBeUndefined();
  });
});
