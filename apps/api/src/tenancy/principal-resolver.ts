import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { AuthFailureGate } from './auth-failure-gate.js';
import { bearerToken } from './bearer.js';
import { clientGroup } from './client-group.js';
import { ApiKeyCache } from './key-cache.js';
import { keyDigest } from './key-hash.js';
import type { Principal } from './principal.js';

/** Why a bearer header names no principal; `throttled`: not looked up, the client is over its failed-authentication budget. */
export type Unresolved = 'missing' | 'unknown' | 'throttled';

/**
 * Who an `Authorization: Bearer …` header is: the admin, an app's active key, or nobody. Shared by
 * the auth guard and the rate limiter (which runs before the guard): a request's principal is
 * resolved once (one SHA-256 of the presented key, then the in-process key cache) and remembered
 * for the request's other hooks.
 */
@Injectable()
export class PrincipalResolver {
  private readonly adminDigest: Buffer | undefined;
  private readonly byRequest = new WeakMap<object, Promise<Principal | Unresolved>>();

  constructor(
    private readonly keys: ApiKeyCache,
    private readonly gate: AuthFailureGate,
    @Inject(CONFIG) config: Config,
  ) {
    this.adminDigest = config.adminKey === undefined ? undefined : keyDigest(config.adminKey);
  }

  /** The principal of a request, resolved on the first ask and shared by every later one. */
  ofRequest(request: Readonly<{ ip: string; headers: Readonly<{ authorization?: string }> }>): Promise<Principal | Unresolved> {
    let principal = this.byRequest.get(request);
    if (principal === undefined) {
      principal = this.resolve(request.headers.authorization, request.ip);
      this.byRequest.set(request, principal);
    }
    return principal;
  }

  /** Valid keys still work from a throttled client (one office behind one NAT); unknown keys from it are looked up at most once a second. */
  async resolve(header: string | undefined, clientIp: string): Promise<Principal | Unresolved> {
    const presented = bearerToken(header);
    if (!presented) return 'missing';
    const digest = keyDigest(presented);
    if (this.adminDigest !== undefined && timingSafeEqual(digest, this.adminDigest)) return { kind: 'admin' };
    const hash = digest.toString('hex');
    const cached = this.keys.cached(hash);
    if (cached) return { kind: 'app', appId: cached.appId, keyId: cached.id };
    const group = clientGroup(clientIp);
    if (!this.gate.mayLookUp(group)) return 'throttled';
    const key = await this.keys.findActive(hash);
    if (!key) return 'unknown';
    this.gate.foundValid(group);
    return { kind: 'app', appId: key.appId, keyId: key.id };
  }
}
