import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { redisConnectionOptions } from './redis.js';

const valid = {
  TALLY_HOME: '/nonexistent',
  DATABASE_URL: 'postgresql://tally@127.0.0.1:5432/tally',
  REDIS_URL: 'redis://tally-api:s%40cret@127.0.0.1:6379/2',
  LIVEKIT_URL: 'http://127.0.0.1:7880',
  LIVEKIT_PUBLIC_URL: 'ws://127.0.0.1:7880',
  LIVEKIT_API_KEY: 'tally',
  LIVEKIT_API_SECRET: 'x'.repeat(32),
};

describe(redisConnectionOptions.name, () => {
  it('connects to REDIS_URL as before when no Sentinel is configured', () => {
    const config = loadConfig({ ...valid, REDIS_SENTINELS: '' });

    expect(config.redis.sentinel).toBeUndefined();
    expect(redisConnectionOptions(config.redis, { maxRetriesPerRequest: null })).toEqual({
      url: valid.REDIS_URL,
      maxRetriesPerRequest: null,
    });
  });

  it('asks the Sentinels for the primary without credentials, and signs in to the servers with the URL', () => {
    const config = loadConfig({ ...valid, REDIS_SENTINELS: '10.0.0.2:26379, 10.0.0.3:26380,[fd00::4]:26379' });

    const sut = redisConnectionOptions(config.redis, { maxRetriesPerRequest: 3 });

    expect(sut).toMatchObject({
      sentinels: [
        { host: '10.0.0.2', port: 26379 },
        { host: '10.0.0.3', port: 26380 },
        { host: 'fd00::4', port: 26379 },
      ],
      name: 'tally',
      username: 'tally-api',
      password: 's@cret',
      db: 2,
      maxRetriesPerRequest: 3,
    });
    expect(sut.url).toBeUndefined();
    expect(sut).not.toHaveProperty('sentinelUsername');
    expect(sut).not.toHaveProperty('sentinelPassword');
    expect(sut.reconnectOnError?.(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(sut.reconnectOnError?.(new Error('ERR unknown command'))).toBe(false);
  });

  it('takes the group name from REDIS_SENTINEL_NAME', () => {
    const config = loadConfig({ ...valid, REDIS_SENTINELS: '10.0.0.2:26379', REDIS_SENTINEL_NAME: 'media' });

    expect(config.redis.sentinel?.name).toBe('media');
  });

  it.each([
    ['REDIS_SENTINELS', { REDIS_SENTINELS: '10.0.0.2' }],
    ['REDIS_SENTINELS', { REDIS_SENTINELS: '10.0.0.2:0' }],
    ['REDIS_SENTINELS', { REDIS_SENTINELS: '10.0.0.2:26379,,10.0.0.3:26379' }],
    ['REDIS_SENTINEL_NAME', { REDIS_SENTINELS: '10.0.0.2:26379', REDIS_SENTINEL_NAME: 'a b' }],
    ['REDIS_SENTINELS', { REDIS_SENTINELS: '10.0.0.2:26379', REDIS_URL: 'rediss://127.0.0.1:6379' }],
  ])('refuses to start naming %s', (variable, env) => {
    const attempt = () => loadConfig({ ...valid, ...env });

    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(new RegExp(variable));
  });
});
