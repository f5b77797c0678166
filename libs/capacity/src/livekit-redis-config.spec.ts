import { describe, expect, it } from 'vitest';
import { egressRedisConfig } from './egress-service-config.js';
import { renderIngressServiceConfig } from './ingress-service-config.js';

const sentinel = {
  name: 'tally',
  addresses: [
    { host: '10.0.0.2', port: 26379 },
    { host: 'fd00::3', port: 26379 },
  ],
};

describe(egressRedisConfig.name, () => {
  it('points LiveKit at the server in the URL when Redis runs without Sentinel', () => {
    expect(egressRedisConfig('redis://tally-node-a:pw@10.0.0.1:6379')).toEqual({
      address: '10.0.0.1:6379',
      username: 'tally-node-a',
      password: 'pw',
    });
  });

  it('points LiveKit at the Sentinels, with the node user for the servers only', () => {
    expect(egressRedisConfig('redis://tally-node-a:p%40w@10.0.0.1:6379/3', sentinel)).toEqual({
      sentinel_master_name: 'tally',
      sentinel_addresses: ['10.0.0.2:26379', '[fd00::3]:26379'],
      username: 'tally-node-a',
      password: 'p@w',
      db: 3,
    });
  });

  it('refuses TLS through Sentinel, which Tally does not set up', () => {
    expect(() => egressRedisConfig('rediss://:pw@10.0.0.1:6379', sentinel)).toThrow(/Sentinel/);
  });

  it('gives ingress the same Sentinel section', () => {
    const { redis } = renderIngressServiceConfig({
      apiKey: 'key',
      apiSecret: 'a-secret-of-at-least-thirty-two-characters',
      wsUrl: 'ws://10.0.0.1:7880',
      redisUrl: 'redis://:pw@127.0.0.1:6390',
      redisSentinel: sentinel,
      rtmpPort: 1935,
      whipPort: 8085,
      httpRelayPort: 7892,
      udpPort: 7885,
      nodeIp: '10.0.0.1',
      logLevel: 'info',
    });

    expect(redis).toEqual({
      sentinel_master_name: 'tally',
      sentinel_addresses: ['10.0.0.2:26379', '[fd00::3]:26379'],
      password: 'pw',
    });
  });
});
