import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { egressRedisConfig, ingressPushUrls } from '@tally/capacity';
import type { RedisSentinel } from '@tally/config';
import { startChild } from './child.js';
import { freePort, waitFor } from './ports.js';
import { toolPath } from './tools.js';

export type TestLivekit = Readonly<{
  /** RoomService / HTTP URL */
  url: string;
  /** Where clients connect */
  wsUrl: string;
  /** The same signalling URL on the node IP: what a client in another network namespace dials. */
  nodeWsUrl: string;
  /** The signalling port (a firewall in front of a client must let it through). */
  port: number;
  /** ICE over TCP (a client that reaches it needs no TURN). */
  tcpPort: number;
  apiKey: string;
  apiSecret: string;
  nodeIp: string;
  logFile: string;
  stop(): Promise<void>;
}>;

export type LivekitOptions = Readonly<{
  redisUrl: string;
  /** Ask these Sentinels for the primary (`redisUrl` then gives only the user and password). */
  redisSentinel?: RedisSentinel;
  nodeIp: string;
  webhookUrl?: string;
  /** The ports LiveKit ingress listens on: CreateIngress returns URLs on the node IP and these (no URL without them). */
  ingress?: Readonly<{ rtmpPort: number; whipPort: number }>;
  /** Serve livekit-server's Prometheus metrics on this port (bench/load samples them). */
  prometheusPort?: number;
  /**
   * TURN as install.sh --domain sets it up: this TURN over TLS server (coturn) handed to every
   * participant with credentials minted from its secret, and livekit-server's own TURN over UDP.
   */
  turn?: TurnServer;
}>;

/** A TURN over TLS server that checks TURN REST credentials made from `secret`. */
export type TurnServer = Readonly<{ host: string; port: number; secret: string }>;

/**
 * A real livekit-server on free ports. STUN points at a local address so no
 * client is ever told to reach a public STUN server.
 */
export async function startLivekit(options: LivekitOptions): Promise<TestLivekit> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-livekit-'));
  const [port, tcpPort, udpPort] = [await freePort(), await freePort(), await freePort()];
  const apiKey = 'tallytest';
  const apiSecret = 'tally-test-secret-0123456789abcdef0123456789';
  const redis = new URL(options.redisUrl);
  const pushUrls = options.ingress && ingressPushUrls(options.nodeIp, { rtmp: options.ingress.rtmpPort, whip: options.ingress.whipPort });
  const config = [
    `port: ${port}`,
    'rtc:',
    `  tcp_port: ${tcpPort}`,
    `  udp_port: ${udpPort}`,
    `  node_ip: ${options.nodeIp}`,
    '  use_external_ip: false',
    '  stun_servers: ["127.0.0.1:3478"]',
    ...(options.turn ? await turnConfig(options.turn, options.nodeIp) : []),
    'redis:',
    ...(options.redisSentinel
      ? // JSON values are YAML.
        Object.entries(egressRedisConfig(options.redisUrl, options.redisSentinel)).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
      : [
          `  address: ${redis.hostname}:${redis.port}`,
          ...(redis.username === '' ? [] : [`  username: ${decodeURIComponent(redis.username)}`]),
          ...(redis.password === '' ? [] : [`  password: ${decodeURIComponent(redis.password)}`]),
        ]),
    // As install.sh writes it: only Tally creates rooms, so a token of an ended stream cannot recreate one.
    'room:',
    '  auto_create: false',
    'keys:',
    `  ${apiKey}: ${apiSecret}`,
    ...(pushUrls ? ['ingress:', `  rtmp_base_url: ${pushUrls.rtmpUrl}`, `  whip_base_url: ${pushUrls.whipUrl}`] : []),
    ...(options.webhookUrl ? ['webhook:', `  api_key: ${apiKey}`, '  urls:', `    - ${options.webhookUrl}`] : []),
    ...(options.prometheusPort ? [`prometheus_port: ${options.prometheusPort}`] : []),
    'logging:',
    '  level: info',
  ].join('\n');
  const configFile = join(dir, 'livekit.yaml');
  writeFileSync(configFile, `${config}\n`);
  const logFile = join(dir, 'livekit.log');
  const child = startChild(toolPath('livekit-server'), ['--config', configFile], logFile);
  // livekit-server exits on a recovered panic in a participant's session (os.Exit(1)): say so where
  // the failing test will look, and keep the log that holds the panic.
  let stopping = false;
  let died = false;
  child.process.once('exit', (code, signal) => {
    if (stopping) return;
    died = true;
    const line = `[tally-testing] livekit-server exited while its test was running (code ${code}, signal ${signal}); log kept: ${logFile}`;
    appendFileSync(logFile, `${line}\n`);
    console.error(line);
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('livekit-server', async () => ((await fetch(url)).ok ? true : undefined), 60_000);
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    nodeWsUrl: `ws://${options.nodeIp}:${port}`,
    port,
    tcpPort,
    apiKey,
    apiSecret,
    nodeIp: options.nodeIp,
    logFile,
    async stop() {
      stopping = true;
      await child.stop();
      if (!died) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** As install.sh writes them: rtc.turn_servers (indented under rtc:), then the built-in TURN over UDP. */
async function turnConfig(turn: TurnServer, nodeIp: string): Promise<string[]> {
  return [
    '  turn_servers:',
    `    - host: ${turn.host}`,
    `      port: ${turn.port}`,
    '      protocol: tls',
    `      secret: ${turn.secret}`,
    'turn:',
    '  enabled: true',
    `  udp_port: ${await freePort()}`,
    // The relay forwards to this server's own ICE address, which is private here.
    `  allow_restricted_peer_cidrs: ["${nodeIp}/32"]`,
  ];
}
