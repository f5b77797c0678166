import type { Config } from '@tally/config';
import { describe, expect, it } from 'vitest';
import type { ApiKeyCache } from './key-cache.js';
import { hashKey } from './key-hash.js';
import { PrincipalResolver } from './principal-resolver.js';

function setup() {
  const lookups: string[] = [];
  const keys = {
    findActive(hash: string) {
      lookups.push(hash);
      return Promise.resolve(hash === hashKey('tk_app') ? { id: 'key_1', appId: 'app_1' } : undefined);
    },
  } as unknown as ApiKeyCache;
  const sut = new PrincipalResolver(keys, { adminKey: 'admin-secret' } as unknown as Config);
  const request = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } });
  return { sut, lookups, request };
}

describe(PrincipalResolver.name, () => {
  it('tells the admin key, an app key, an unknown key and a missing header apart', async () => {
    const t = setup();
    expect(await t.sut.ofRequest(t.request('Bearer admin-secret'))).toEqual({ kind: 'admin' });
    expect(await t.sut.ofRequest(t.request('bearer tk_app'))).toEqual({ kind: 'app', appId: 'app_1', keyId: 'key_1' });
    expect(await t.sut.ofRequest(t.request('Bearer tk_other'))).toBe('unknown');
    expect(await t.sut.ofRequest(t.request('Basic tk_app'))).toBe('missing');
    expect(await t.sut.ofRequest(t.request())).toBe('missing');
    expect(t.lookups).toEqual([hashKey('tk_app'), hashKey('tk_other')]);
  });

  it('resolves a request once however many hooks ask, and each new request afresh', async () => {
    const t = setup();
    const request = t.request('Bearer tk_app');
    const [first, second] = [t.sut.ofRequest(request), t.sut.ofRequest(request)];
    expect(second).toBe(first);
    await t.sut.ofRequest(t.request('Bearer tk_app'));
    expect(t.lookups).toHaveLength(2);
  });
});
