import { JOBS } from '@tally/contracts';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../config.js';
import { stageBackoffMs } from './staging-worker.js';

const BASE = { REDIS_URL: 'redis://127.0.0.1:6379', TALLY_NODE_ID: 'w-1' };

describe('StagingStoreConfig', () => {
  it('is off without a bucket, and needs both keys with one', () => {
    expect(loadAgentConfig(BASE).objectStore).toBeUndefined();
    expect(() => loadAgentConfig({ ...BASE, TALLY_S3_BUCKET: 'b', TALLY_S3_ACCESS_KEY: 'k' })).toThrow(/TALLY_S3_SECRET_KEY/);
    expect(loadAgentConfig({ ...BASE, TALLY_S3_BUCKET: 'b', TALLY_S3_ACCESS_KEY: 'k', TALLY_S3_SECRET_KEY: 's' }).objectStore).toEqual({
      bucket: 'b',
      endpoint: undefined,
      region: 'us-east-1',
      accessKey: 'k',
      secretKey: 's',
      forcePathStyle: true,
    });
    expect(() => loadAgentConfig({ ...BASE, TALLY_S3_BUCKET: 'b', TALLY_S3_ENDPOINT: 'ftp://x' })).toThrow(/TALLY_S3_ENDPOINT/);
  });

  it('retries a staging job 2 s after the first failure, doubling up to five minutes', () => {
    expect([1, 2, 3, 8, 9, 50].map(stageBackoffMs)).toEqual([2_000, 4_000, 8_000, 256_000, 300_000, 300_000]);
  });

  it('is asked only for locations inside the incoming area', () => {
    const parse = (location: string) => JOBS.stageRecording.payload.safeParse({ recordingId: 'rec_x', locations: [location] }).success;
    expect(parse('app_1/rec_0123456789abcdef.mp4')).toBe(true);
    for (const bad of ['../etc/passwd', 'app_1/../../x', 'app_1/.hidden', '/abs/x.mp4', 'app_1/sub/x.mp4', 'app.1/x.mp4'])
      expect(parse(bad)).toBe(false);
  });
});
