import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { ApiKeyCache } from './key-cache.js';
import { hashKey, sameSecret } from './key-hash.js';
import type { Principal } from './principal.js';

/** Why a bearer header names no principal. */
export type Unresolved = 'missing' | 'unknown';

/**
 * Who an `Authorization: Bearer …` header is: the admin, an app's active key, or nobody. Shared by
 * the auth guard and the rate limiter (which runs before the guard); keys come from the in-process
 * cache, so asking twice per request costs one map lookup.
 */
@Injectable()
export class PrincipalResolver {
  constructor(
    private readonly keys: ApiKeyCache,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async resolve(header: string | undefined): Promise<Principal | Unresolved> {
    const presented = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
    if (!presented) return 'missing';
    if (this.config.adminKey !== undefined && sameSecret(presented, this.config.adminKey)) return { kind: 'admin' };
    const key = await this.keys.findActive(hashKey(presented));
    return key ? { kind: 'app', appId: key.appId, keyId: key.id } : 'unknown';
  }
}
