import { egressRedisConfig, type EgressRedisConfig, type LivekitRedisSentinel } from './egress-service-config.js';

export type IngressServiceConfigInput = Readonly<{
  apiKey: string;
  apiSecret: string;
  wsUrl: string;
  /** The Redis livekit-server uses: redis://[[user]:password@]host:port[/db]. */
  redisUrl: string;
  /** The Sentinels that name the primary, when Redis runs with Sentinel. */
  redisSentinel?: LivekitRedisSentinel;
  /** Ingress binds it on every address, so Tally's own workers leave it out (no port). */
  healthPort?: number;
  /** The ports livekit-server's `ingress:` section announces in the URLs CreateIngress returns. */
  rtmpPort: number;
  whipPort: number;
  httpRelayPort: number;
  /** WHIP's WebRTC transport: one UDP port on the node's media address. */
  udpPort: number;
  nodeIp: string;
  /**
   * The one local address that port is bound on (`rtc_config.ips.includes`), when `nodeIp` is one
   * of this host's own. LiveKit's one-port mux maps every local address to `node_ip` and backs the
   * single candidate it announces with whichever address it happens to list first; on a host with
   * several addresses that is often another one, whose socket knows no session, and no publisher
   * connects until ingress restarts.
   */
  bindIp?: string;
  /**
   * TURN servers WHIP publishers are handed with the answer (`Link` headers, RFC 9725 section 4.6),
   * with credentials ingress mints from the secret each shares with its server (TURN REST).
   */
  turnServers?: readonly IngressTurnServer[];
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}>;

/** A TURN over TLS server that checks TURN REST credentials made from `secret` (docs/adr/0046). */
export type IngressTurnServer = Readonly<{ host: string; port: number; secret: string }>;

/** How long the credentials a WHIP publisher is handed stay valid: LiveKit's for participants, 4 hours. */
export const WHIP_TURN_CREDENTIAL_TTL_S = 14_400;

export type IngressServiceConfig = Readonly<{
  api_key: string;
  api_secret: string;
  ws_url: string;
  redis: EgressRedisConfig;
  health_port?: number;
  rtmp_port: number;
  whip_port: number;
  http_relay_port: number;
  rtc_config: { udp_port: number; node_ip: string; use_external_ip: false; stun_servers: string[]; ips?: { includes: string[] } };
  whip_turn_servers?: { host: string; port: number; protocol: 'tls'; secret: string; ttl: number }[];
  cpu_cost: {
    rtmp_cpu_cost: number;
    whip_cpu_cost: number;
    whip_bypass_transcoding_cpu_cost: number;
    url_cpu_cost: number;
    min_idle_ratio: number;
  };
  logging: { level: string };
}>;

/**
 * Costs in cores, set so that LiveKit ingress never refuses a session on its own. Ingress v1.5.0
 * accepts a session only while `idle - pending - min_idle_ratio × cores > cost` for the CPU it measures
 * (pkg/stats/monitor.go), and run natively it measures the whole host: its cgroup probe reads only
 * /sys/fs/cgroup/cpu,cpuacct and cgroup v2's root, else /proc/stat. On a busy host idle reaches 0 and
 * it answered "server capacity exceeded" to pushes Tally had already admitted against the node's
 * budget (and the encoder saw its connection dropped). Tally's admission is the one that decides, so
 * every cost sits below the lowest value the left side can take (idle ≥ 0, pending ≤ 0 with negative
 * costs, min_idle_ratio × cores < 1 up to a million cores). min_idle_ratio stays above 0: ingress reads
 * 0 as "use the default, 0.3".
 */
export const INGRESS_CPU_COST: IngressServiceConfig['cpu_cost'] = Object.freeze({
  rtmp_cpu_cost: -1,
  whip_cpu_cost: -1,
  whip_bypass_transcoding_cpu_cost: -1,
  url_cpu_cost: -1,
  min_idle_ratio: 0.000001,
});

/** The ingress service's config for one node; never hands out a public STUN server. */
export function renderIngressServiceConfig(input: IngressServiceConfigInput): IngressServiceConfig {
  const redis = new URL(input.redisUrl);
  const db = redis.pathname.replace(/^\//, '');
  return {
    api_key: input.apiKey,
    api_secret: input.apiSecret,
    ws_url: input.wsUrl,
    redis: input.redisSentinel
      ? egressRedisConfig(input.redisUrl, input.redisSentinel)
      : {
          address: `${redis.hostname}:${redis.port || '6379'}`,
          ...(redis.username === '' ? {} : { username: decodeURIComponent(redis.username) }),
          ...(redis.password === '' ? {} : { password: decodeURIComponent(redis.password) }),
          ...(db === '' ? {} : { db: Number(db) }),
        },
    ...(input.healthPort === undefined ? {} : { health_port: input.healthPort }),
    rtmp_port: input.rtmpPort,
    whip_port: input.whipPort,
    http_relay_port: input.httpRelayPort,
    rtc_config: {
      udp_port: input.udpPort,
      node_ip: input.nodeIp,
      use_external_ip: false,
      stun_servers: ['127.0.0.1:3478'],
      ...(input.bindIp === undefined ? {} : { ips: { includes: [`${input.bindIp}/32`] } }),
    },
    ...(input.turnServers === undefined || input.turnServers.length === 0
      ? {}
      : {
          whip_turn_servers: input.turnServers.map(({ host, port, secret }) => ({
            host,
            port,
            protocol: 'tls' as const,
            secret,
            ttl: WHIP_TURN_CREDENTIAL_TTL_S,
          })),
        }),
    cpu_cost: INGRESS_CPU_COST,
    logging: { level: input.logLevel },
  };
}

/** Where encoders reach a node's ingress: its RTMP base URL (the stream key is appended) and its WHIP URL. */
export type IngressPushUrls = Readonly<{ rtmpUrl: string; whipUrl: string }>;

/** The URLs a node's ingress takes pushes on, as livekit-server's `ingress:` section writes them for the origin. */
export function ingressPushUrls(nodeIp: string, ports: Readonly<{ rtmp: number; whip: number }>): IngressPushUrls {
  return { rtmpUrl: `rtmp://${nodeIp}:${ports.rtmp}/x`, whipUrl: `http://${nodeIp}:${ports.whip}/w` };
}
