import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentConfigError, AgentEnvSchema, loadAgentConfig } from './config.js';

const REDIS_URL = 'redis://10.0.0.1:6379';

describe(loadAgentConfig.name, () => {
  it('defaults to the hostname, the origin role and a 5 s beat that lives 15 s', () => {
    const sut = loadAgentConfig({ REDIS_URL }, 'media-1.example');

    expect(sut).toMatchObject({
      nodeId: 'media-1.example',
      role: 'origin',
      heartbeat: { intervalS: 5, ttlS: 15 },
      logLevel: 'info',
      labels: {},
      nvencUnlimitedCap: 32,
    });
    expect(sut.overrides).toEqual({ cpuMillicores: undefined, ramMb: undefined, nicMbps: undefined, nvencSessions: undefined });
    expect(Object.isFrozen(sut) && Object.isFrozen(sut.heartbeat)).toBe(true);
  });

  it('reads overrides and labels; an empty variable counts as unset', () => {
    const sut = loadAgentConfig(
      {
        REDIS_URL,
        TALLY_NODE_ID: 'gpu-2',
        TALLY_NODE_ROLE: 'worker',
        TALLY_HEARTBEAT_INTERVAL_S: '2',
        TALLY_LOG_LEVEL: 'warn',
        TALLY_NODE_CPU_MILLICORES: '3500',
        TALLY_NODE_RAM_MB: '',
        TALLY_NODE_NIC_MBPS: '2500',
        TALLY_NODE_LABELS: 'zone=eu-west, gpu=l4,rack=',
      },
      'ignored',
    );

    expect(sut).toMatchObject({ nodeId: 'gpu-2', role: 'worker', heartbeat: { intervalS: 2, ttlS: 6 }, logLevel: 'warn' });
    expect(sut.overrides).toMatchObject({ cpuMillicores: 3_500, ramMb: undefined, nicMbps: 2_500 });
    expect(sut.labels).toEqual({ zone: 'eu-west', gpu: 'l4', rack: '' });
  });

  it('names every invalid variable', () => {
    const attempt = () =>
      loadAgentConfig(
        { REDIS_URL: 'http://nope', TALLY_NODE_ROLE: 'edge', TALLY_NODE_LABELS: 'zone', TALLY_NODE_RAM_MB: '-1', TALLY_LOG_LEVEL: 'loud' },
        'h',
      );

    expect(attempt).toThrow(AgentConfigError);
    for (const name of ['REDIS_URL', 'TALLY_NODE_ROLE', 'TALLY_NODE_LABELS', 'TALLY_NODE_RAM_MB', 'TALLY_LOG_LEVEL'])
      expect(attempt).toThrow(name);
  });

  it('follows the primary through the Sentinels, and hands them to egress and ingress', () => {
    const sut = loadAgentConfig({ REDIS_URL, REDIS_SENTINELS: '10.0.0.2:26379,10.0.0.3:26379' }, 'media-1');

    const sentinel = {
      name: 'tally',
      addresses: [
        { host: '10.0.0.2', port: 26379 },
        { host: '10.0.0.3', port: 26379 },
      ],
    };
    expect(sut.redis).toEqual({ url: REDIS_URL, sentinel });
    expect(sut.workers.redisSentinel).toEqual(sentinel);
    expect(loadAgentConfig({ REDIS_URL }, 'media-1').workers.redisSentinel).toBeUndefined();
  });

  it("hands ingress the origin's TURN over TLS server for WHIP publishers, given its host and secret together", () => {
    const turn = { TALLY_CLUSTER_TURN_HOST: 'turn.media.example', TALLY_CLUSTER_TURN_SECRET: 'a-shared-secret-of-coturn' };

    expect(loadAgentConfig({ REDIS_URL, ...turn, TALLY_CLUSTER_TURN_PORT: '443' }, 'media-1').workers.turn).toEqual({
      host: 'turn.media.example',
      port: 443,
      secret: 'a-shared-secret-of-coturn',
    });
    expect(loadAgentConfig({ REDIS_URL }, 'media-1').workers.turn).toBeUndefined();
    expect(() => loadAgentConfig({ REDIS_URL, TALLY_CLUSTER_TURN_HOST: 'turn.media.example' }, 'media-1')).toThrow(
      /TALLY_CLUSTER_TURN_SECRET/,
    );
  });

  it('refuses a Sentinel list that is not host:port', () => {
    expect(() => loadAgentConfig({ REDIS_URL, REDIS_SENTINELS: '10.0.0.2' }, 'media-1')).toThrow(/REDIS_SENTINELS/);
  });

  it('refuses a hostname that cannot be a node id unless TALLY_NODE_ID is set', () => {
    expect(() => loadAgentConfig({ REDIS_URL }, 'bad host')).toThrow(/TALLY_NODE_ID/);
    expect(loadAgentConfig({ REDIS_URL, TALLY_NODE_ID: 'n1' }, 'bad host').nodeId).toBe('n1');
  });
});

describe('.env.example', () => {
  it('documents every variable the agent reads', () => {
    const example = readFileSync(join(import.meta.dirname, '..', '..', '..', '.env.example'), 'utf8');
    const documented = new Set([...example.matchAll(/^([A-Z0-9_]+)=/gm)].map((m) => m[1]));

    expect(Object.keys(AgentEnvSchema.shape).filter((name) => !documented.has(name))).toEqual([]);
  });
});
