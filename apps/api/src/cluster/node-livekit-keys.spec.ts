import type { Config } from '@tally/config';
import type { RedisConnection } from '@tally/runtime';
import { describe, expect, it } from 'vitest';
import { holdsOwnLivekitKey, NodeLivekitKeys } from './node-livekit-keys.js';

const keysWith = (apiSecret: string) =>
  new NodeLivekitKeys({} as RedisConnection, { livekit: { apiKey: 'cluster', apiSecret } } as unknown as Config);

describe(NodeLivekitKeys.name, () => {
  it("derives a node's key from its name and current Redis password: a re-join changes the secret, the cluster's secret is never handed out", () => {
    const sut = keysWith('cluster-secret-0123456789abcdef0123456789');
    const first = sut.credentials('w1', 'a'.repeat(64));
    expect(first.apiKey).toBe('tally-node-w1');
    expect(first.apiSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(sut.credentials('w1', 'a'.repeat(64))).toEqual(first);
    expect(sut.credentials('w1', 'b'.repeat(64)).apiSecret).not.toBe(first.apiSecret);
    expect(sut.credentials('w2', 'a'.repeat(64)).apiSecret).not.toBe(first.apiSecret);
    expect(keysWith('another-cluster-secret-0123456789abcdef').credentials('w1', 'a'.repeat(64)).apiSecret).not.toBe(first.apiSecret);
  });

  it('gives worker and GPU nodes a key of their own, media nodes none', () => {
    expect([holdsOwnLivekitKey('worker'), holdsOwnLivekitKey('gpu'), holdsOwnLivekitKey('media')]).toEqual([true, true, false]);
  });
});
