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

/** A header already resolved to a principal; `hash`: the app key's, whose presence in the key cache says it is still active. */
type Known = Readonly<{ principal: Principal; hash: string | undefined }>;

/** Headers remembered at most; past it the oldest is forgotten (in constant time). */
const MAX_KNOWN = 10_000;

/**
 * Who an `Authorization: Bearer …` header is: the admin, an app's active key, or nobody. Shared by
 * the auth guard and the rate limiter (which runs before the guard).
 *
 * A header seen before is answered synchronously from memory: the principal it resolved to, kept
 * for as long as the key cache holds its key (revoking the key or deleting its app evicts it there,
 * on every replica, so the next request resolves afresh and is refused). That spares every keyed
 * request the key's SHA-256 and a promise per hook. A new header is resolved once (one SHA-256 of
 * the presented key, then the key cache, then Postgres) and remembered for the request's other hooks.
 */
@Injectable()
export class PrincipalResolver {
  private readonly adminDigest: Buffer | undefined;
  private readonly byRequest = new WeakMap<object, Promise<Principal | Unresolved>>();
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly keys: ApiKeyCache,
    private readonly gate: AuthFailureGate,
    @Inject(CONFIG) config: Config,
  ) {
    this.adminDigest = config.adminKey === undefined ? undefined : keyDigest(config.adminKey);
  }

  /** The principal of a request: at once for a header resolved before, else resolved on the first ask and shared by every later one. */
  ofRequest(
    request: Readonly<{ ip: string; headers: Readonly<{ authorization?: string }> }>,
  ): Principal | Unresolved | Promise<Principal | Unresolved> {
    const header = request.headers.authorization;
    const known = header === undefined ? undefined : this.knownPrincipal(header);
    if (known !== undefined) return known;
    let principal = this.byRequest.get(request);
    if (principal === undefined) {
      principal = this.resolve(header, request.ip);
      this.byRequest.set(request, principal);
    }
    return principal;
  }

  /** Valid keys still work from a throttled client (one office behind one NAT); unknown keys from it are looked up at most once a second. */
  async resolve(header: string | undefined, clientIp: string): Promise<Principal | Unresolved> {
    const presented = bearerToken(header);
    if (!presented) return 'missing';
    const digest = keyDigest(presented);
    if (this.adminDigest !== undefined && timingSafeEqual(digest, this.adminDigest))
      return this.remember(header!, { kind: 'admin' }, undefined);
    const hash = digest.toString('hex');
    const cached = this.keys.cached(hash);
    if (cached) return this.remember(header!, { kind: 'app', appId: cached.appId, keyId: cached.id }, hash);
    const group = clientGroup(clientIp);
    if (!this.gate.mayLookUp(group)) return 'throttled';
    const key = await this.keys.findActive(hash);
    if (!key) return 'unknown';
    this.gate.foundValid(group);
    return this.remember(header!, { kind: 'app', appId: key.appId, keyId: key.id }, hash);
  }

  private knownPrincipal(header: string): Principal | undefined {
    const known = this.known.get(header);
    if (known === undefined) return undefined;
    if (known.hash === undefined || this.keys.cached(known.hash) !== undefined) return known.principal;
    // Revoked, or merely expired from the key cache: resolved afresh.
    this.known.delete(header);
    return undefined;
  }

  private remember(header: string, principal: Principal, hash: string | undefined): Principal {
    if (!this.known.has(header) && this.known.size >= MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
    this.known.set(header, { principal, hash });
    return principal;
  }
}
