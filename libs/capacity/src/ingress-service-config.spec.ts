import { describe, expect, it } from 'vitest';
import { renderIngressServiceConfig } from './ingress-service-config.js';

const input = {
  apiKey: 'key',
  apiSecret: 'a-secret-of-at-least-thirty-two-characters',
  wsUrl: 'ws://10.0.0.1:7880',
  redisUrl: 'redis://:pw@127.0.0.1:6390/2',
  healthPort: 7891,
  rtmpPort: 1935,
  whipPort: 8085,
  httpRelayPort: 7892,
  udpPort: 7885,
  nodeIp: '10.0.0.1',
  logLevel: 'info',
} as const;

/** LiveKit ingress v1.5.0's accept rule (pkg/stats/monitor.go getAvailable / canAcceptIngress). */
function ingressAccepts(cost: number, minIdleRatio: number, idleCores: number, cores: number): boolean {
  const ratio = minIdleRatio <= 0 ? 0.3 : minIdleRatio; // 0 means its default
  return idleCores - ratio * cores > cost;
}

describe(renderIngressServiceConfig.name, () => {
  it('leaves admission to Tally: ingress takes every session even with no idle CPU, on any core count', () => {
    const { cpu_cost: c } = renderIngressServiceConfig(input);
    expect(c.min_idle_ratio).toBeGreaterThan(0);
    for (const cost of [c.rtmp_cpu_cost, c.whip_cpu_cost, c.whip_bypass_transcoding_cpu_cost, c.url_cpu_cost]) {
      for (const cores of [1, 2, 8, 64, 512]) expect(ingressAccepts(cost, c.min_idle_ratio, 0, cores)).toBe(true);
    }
  });

  it('hands WHIP clients only the node address, never a public STUN server', () => {
    const { rtc_config, redis } = renderIngressServiceConfig(input);
    expect(rtc_config).toEqual({ udp_port: 7885, node_ip: '10.0.0.1', use_external_ip: false, stun_servers: ['127.0.0.1:3478'] });
    expect(redis).toEqual({ address: '127.0.0.1:6390', password: 'pw', db: 2 });
  });

  it('hands WHIP publishers the TURN over TLS servers it is given, with their secrets, for 4-hour credentials', () => {
    const turnServers = [{ host: 'turn.media.example', port: 443, secret: 'a-shared-secret-of-coturn' }];
    expect(renderIngressServiceConfig({ ...input, turnServers }).whip_turn_servers).toEqual([
      { host: 'turn.media.example', port: 443, protocol: 'tls', secret: 'a-shared-secret-of-coturn', ttl: 14_400 },
    ]);
    expect(renderIngressServiceConfig(input)).not.toHaveProperty('whip_turn_servers');
    expect(renderIngressServiceConfig({ ...input, turnServers: [] })).not.toHaveProperty('whip_turn_servers');
  });

  it('opens no health port unless asked: ingress would bind it on every address', () => {
    const { healthPort: _, ...withoutPort } = input;
    expect(renderIngressServiceConfig(withoutPort)).not.toHaveProperty('health_port');
  });
});
