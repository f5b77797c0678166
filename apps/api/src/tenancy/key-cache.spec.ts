import type { ApiKey } from '@tally/db';
import { describe, expect, it } from 'vitest';
import { fakeInvalidation, holdableRead } from '../../test/fake-invalidation.js';
import type { KeysRepository } from './keys.repository.js';
import { ApiKeyCache } from './key-cache.js';

function setup() {
  const rows = new Map<string, ApiKey>([['h1', { id: 'key_1', appId: 'app_1', hash: 'h1' } as ApiKey]]);
  let reads = 0;
  const read = holdableRead();
  const repository = {
    async findActiveByHash(hash: string) {
      reads += 1;
      const row = rows.get(hash) ?? null;
      await read.gate();
      return row;
    },
  } as unknown as KeysRepository;
  const { invalidation, bus, evict } = fakeInvalidation();
  const cache = new ApiKeyCache(repository, invalidation);
  return { cache, rows, reads: () => reads, evict, blockNextRead: read.holdNext, release: read.release, bus };
}

describe('ApiKeyCache', () => {
  it('reads a key once, then serves it from memory until it is evicted', async () => {
    const t = setup();
    expect(await t.cache.findActive('h1')).toEqual({ id: 'key_1', appId: 'app_1' });
    expect(await t.cache.findActive('h1')).toEqual({ id: 'key_1', appId: 'app_1' });
    expect(t.reads()).toBe(1);
    t.rows.delete('h1');
    t.evict({ kind: 'key', keyId: 'key_1' });
    expect(await t.cache.findActive('h1')).toBeUndefined();
  });

  it('evicts every key of a deleted app, and everything when messages may have been missed', async () => {
    const t = setup();
    await t.cache.findActive('h1');
    t.evict({ kind: 'app', appId: 'app_2' });
    await t.cache.findActive('h1');
    expect(t.reads()).toBe(1);
    t.evict({ kind: 'app', appId: 'app_1' });
    await t.cache.findActive('h1');
    t.evict({ kind: 'all' });
    await t.cache.findActive('h1');
    expect(t.reads()).toBe(3);
  });

  it('does not cache a read that raced a revocation', async () => {
    const t = setup();
    t.blockNextRead();
    const racing = t.cache.findActive('h1');
    t.evict({ kind: 'key', keyId: 'key_1' });
    t.release();
    expect(await racing).toEqual({ id: 'key_1', appId: 'app_1' });
    t.rows.delete('h1');
    expect(await t.cache.findActive('h1')).toBeUndefined();
  });

  it('never serves from memory while the invalidation channel is down', async () => {
    const t = setup();
    await t.cache.findActive('h1');
    t.bus.live = false;
    t.rows.delete('h1');
    expect(await t.cache.findActive('h1')).toBeUndefined();
  });
});
