import type { Config } from '@tally/config';
import { describe, expect, it } from 'vitest';
import { AuthFailureGate } from './auth-failure-gate.js';
import type { ApiKeyCache } from './key-cache.js';
import { hashKey } from './key-hash.js';
import { PrincipalResolver } from './principal-resolver.js';

function setup() {
  const lookups: string[] = [];
  const cached = new Set<string>();
  const keys = {
    cached(hash: string) {
      return cached.has(hash) ? { id: 'key_1', appId: 'app_1' } : undefined;
    },
    findActive(hash: string) {
      lookups.push(hash);
      return Promise.resolve(hash === hashKey('tk_app') ? { id: 'key_1', appId: 'app_1' } : undefined);
    },
  } as unknown as ApiKeyCache;
  const gate = new AuthFailureGate();
  const sut = new PrincipalResolver(keys, gate, { adminKey: 'admin-secret' } as unknown as Config);
  const request = (authorization?: string, ip = '198.51.100.7') => ({ ip, headers: authorization === undefined ? {} : { authorization } });
  return { sut, lookups, request, gate, cached };
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

  it('looks up no key for a client over its failed-authentication budget, but a cached key from it still works', async () => {
    const t = setup();
    t.gate.block('198.51.100.7', Date.now() + 60_000, 10, 60);
    t.gate.block('2001:db8:1:2::/64', Date.now() + 60_000, 10, 60);
    // Valid keys from the same office are looked up whenever they come; an unknown key takes the
    // one lookup a second, and the next key within that second is not looked up.
    expect(await t.sut.ofRequest(t.request('Bearer tk_app'))).toEqual({ kind: 'app', appId: 'app_1', keyId: 'key_1' });
    expect(await t.sut.ofRequest(t.request('Bearer tk_app'))).toEqual({ kind: 'app', appId: 'app_1', keyId: 'key_1' });
    expect(await t.sut.ofRequest(t.request('Bearer tk_wrong'))).toBe('unknown');
    expect(await t.sut.ofRequest(t.request('Bearer tk_app2'))).toBe('throttled');
    expect(await t.sut.ofRequest(t.request('Bearer tk_app'))).toBe('throttled');
    expect(await t.sut.ofRequest(t.request('Bearer tk_guess', '2001:db8:1:2:aaaa::9'))).toBe('unknown');
    expect(await t.sut.ofRequest(t.request('Bearer tk_guess', '2001:db8:1:2:bbbb::9'))).toBe('throttled');
    t.lookups.length = 0;
    expect(await t.sut.ofRequest(t.request('Bearer admin-secret'))).toEqual({ kind: 'admin' });
    t.cached.add(hashKey('tk_app'));
    expect(await t.sut.ofRequest(t.request('Bearer tk_app'))).toEqual({ kind: 'app', appId: 'app_1', keyId: 'key_1' });
    expect(t.lookups).toEqual([]);
    // Another client, and another /64, are looked up as usual.
    expect(await t.sut.ofRequest(t.request('Bearer tk_guess', '2001:db8:1:3::9'))).toBe('unknown');
    expect(t.lookups).toEqual([hashKey('tk_guess')]);
  });

  it('answers a key seen before without looking it up or hashing it again, until the key cache lets it go (revoked)', async () => {
    const t = setup();
    t.cached.add(hashKey('tk_app'));
    expect(await t.sut.ofRequest(t.request('Bearer tk_app'))).toEqual({ kind: 'app', appId: 'app_1', keyId: 'key_1' });
    // Seen before: answered at once, no promise.
    expect(t.sut.ofRequest(t.request('Bearer tk_app'))).toEqual({ kind: 'app', appId: 'app_1', keyId: 'key_1' });
    expect(t.sut.ofRequest(t.request('Bearer admin-secret'))).toBeInstanceOf(Promise);
    expect(t.sut.ofRequest(t.request('Bearer admin-secret'))).toEqual({ kind: 'admin' });
    // Revoking the key evicts it from the key cache: the next request is looked up, and refused.
    t.cached.delete(hashKey('tk_app'));
    const afterRevocation = t.sut.ofRequest(t.request('Bearer tk_app'));
    expect(afterRevocation).toBeInstanceOf(Promise);
    expect(await afterRevocation).toEqual({ kind: 'app', appId: 'app_1', keyId: 'key_1' });
    expect(t.lookups).toEqual([hashKey('tk_app')]);
    expect(await t.sut.ofRequest(t.request('Bearer tk_other'))).toBe('unknown');
    expect(await t.sut.ofRequest(t.request('Bearer tk_other'))).toBe('unknown');
  });
});
