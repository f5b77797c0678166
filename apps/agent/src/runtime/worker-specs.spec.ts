import { DEFAULT_MODEL, DEFAULT_NODE_BUDGET, EGRESS_PROCESS_ENV } from '@tally/capacity';
import { describe, expect, it } from 'vitest';
import { workerSpec, type SpecInput } from './worker-specs.js';
import type { WorkersConfig } from './workers-config.js';

const config: WorkersConfig = {
  runtime: 'native',
  redisUrl: 'redis://127.0.0.1:6379',
  redisSentinel: undefined,
  idleGraceMs: 60_000,
  dir: '/var/lib/tally/workers',
  dockerSocket: '/var/run/docker.sock',
  images: { egress: 'tally-egress', ingress: 'tally-ingress' },
  binaries: { egress: '/usr/local/bin/egress', ingress: '/usr/local/bin/ingress' },
  livekit: { wsUrl: 'ws://127.0.0.1:7880', apiKey: 'key', apiSecret: 'a-secret-of-at-least-thirty-two-characters' },
  recordingsDir: '/var/lib/tally/recordings',
  capacityProfile: undefined,
  nodeIp: '10.0.0.1',
  turn: undefined,
  ports: { egressTemplate: 7980, ingressRtmp: 1935, ingressWhip: 8080, ingressRelay: 7890, ingressUdp: 7885 },
};
const input: SpecInput = { nodeId: 'n1', budget: DEFAULT_NODE_BUDGET, model: DEFAULT_MODEL, config };

describe(workerSpec.name, () => {
  it.each(['native', 'docker'] as const)(
    'runs egress, and so every recording handler it starts, with its process environment (%s)',
    (runtime) => {
      const sut = workerSpec('egress', { ...input, config: { ...config, runtime } });

      expect(sut.env).toMatchObject(EGRESS_PROCESS_ENV);
      expect(sut.env['HOME']).toBe('/var/lib/tally/workers/egress/home');
    },
  );

  it("hands WHIP publishers the node's TURN over TLS server, and none when there is none", () => {
    const turn = { host: 'turn.media.example', port: 443, secret: 'a-shared-secret-of-coturn' };
    const ingressYaml = (c: WorkersConfig) =>
      JSON.parse(workerSpec('ingress', { ...input, config: c }).files[0]?.content ?? '{}') as Record<string, unknown>;

    expect(ingressYaml({ ...config, turn })['whip_turn_servers']).toEqual([{ ...turn, protocol: 'tls', ttl: 14_400 }]);
    expect(ingressYaml(config)).not.toHaveProperty('whip_turn_servers');
  });
});
