import { Injectable } from '@nestjs/common';
import type { ApiKeyView, CreatedApiKey } from '@tally/contracts';
import type { ApiKey } from '@tally/db';
import { AppsRepository } from '../tenancy/apps.repository.js';
import { displayPrefix, generateApiKey, hashKey } from '../tenancy/key-hash.js';
import { Clock } from '../common/clock.js';
import { NotFoundError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { CacheInvalidation } from '@tally/runtime';
import { KeysRepository } from '../tenancy/keys.repository.js';

@Injectable()
export class KeysService {
  constructor(
    private readonly keys: KeysRepository,
    private readonly apps: AppsRepository,
    private readonly clock: Clock,
    private readonly invalidation: CacheInvalidation,
  ) {}

  async create(appId: string): Promise<CreatedApiKey> {
    if (!(await this.apps.find(appId))) throw new NotFoundError('app');
    const secret = generateApiKey();
    const row = await this.keys.create({ id: newId('key'), appId, prefix: displayPrefix(secret), hash: hashKey(secret) });
    return { ...toView(row), key: secret };
  }

  async list(appId: string): Promise<ApiKeyView[]> {
    if (!(await this.apps.find(appId))) throw new NotFoundError('app');
    return (await this.keys.listActive(appId)).map(toView);
  }

  async revoke(appId: string, keyId: string): Promise<void> {
    if (!(await this.keys.revoke(appId, keyId, this.clock.now()))) throw new NotFoundError('key');
    await this.invalidation.publish({ kind: 'key', keyId });
  }
}

function toView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    appId: key.appId,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  };
}
