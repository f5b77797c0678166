import { DEFAULT_MODEL, DEFAULT_NODE_BUDGET, EGRESS_PROCESS_ENV } from '@tally/capacity';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isOwnAddress, workerSpec, type SpecInput } from './worker-specs.js';
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

  it("binds WHIP's UDP port on the node's own address only, so its one candidate is backed by that address's socket", () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .find((a) => a !== undefined && !a.internal && a.family === 'IPv4')?.address;
    if (own === undefined) throw new Error('this host has no IPv4 address but loopback');
    const rtc = (nodeIp: string) =>
      (
        JSON.parse(workerSpec('ingress', { ...input, config: { ...config, nodeIp } }).files[0]?.content ?? '{}') as {
          rtc_config: Record<string, unknown>;
        }
      ).rtc_config;

    expect(rtc(own)).toMatchObject({ node_ip: own, ips: { includes: [`${own}/32`] } });
    // A public address in front of the host (NAT): nothing of the host's to bind, so LiveKit binds every address.
    expect(rtc('203.0.113.7')).not.toHaveProperty('ips');
  });
});

describe(isOwnAddress.name, () => {
  const iface = (address: string, internal = false): NetworkInterfaceInfo => ({
    address,
    internal,
    family: 'IPv4',
    netmask: '255.255.255.0',
    mac: '00:00:00:00:00:00',
    cidr: `${address}/24`,
  });
  const interfaces = { lo: [iface('127.0.0.1', true)], eth0: [iface('10.0.0.5'), iface('10.0.0.6')], docker0: [iface('172.17.0.1')] };

  it('knows the addresses of every interface but loopback', () => {
    expect(['10.0.0.5', '10.0.0.6', '172.17.0.1'].map((ip) => isOwnAddress(ip, interfaces))).toEqual([true, true, true]);
    expect(isOwnAddress('127.0.0.1', interfaces)).toBe(false);
    expect(isOwnAddress('203.0.113.7', interfaces)).toBe(false);
  });
});
