import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisSentinel } from '@tally/config';
import { WorkerRuntimeName } from '@tally/contracts';
import { z } from 'zod';

const port = z.coerce.number().int().min(1).max(65_535);
const url = (protocols: string[]) =>
  z.string().refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), `must be a ${protocols.join(' or ')} URL`);

/** The agent's worker variables; apps/agent/README.md documents each one. */
export const WorkerEnvSchema = z.object({
  TALLY_WORKER_RUNTIME: WorkerRuntimeName.default('none'),
  TALLY_WORKER_IDLE_GRACE_S: z.coerce.number().int().min(0).default(300),
  TALLY_WORKERS_DIR: z.string().min(1).optional(),
  TALLY_DOCKER_SOCKET: z.string().min(1).default('/var/run/docker.sock'),
  TALLY_EGRESS_IMAGE: z.string().min(1).default('tally/egress:1.8.6'),
  TALLY_INGRESS_IMAGE: z.string().min(1).default('tally/ingress:1.5.0'),
  TALLY_EGRESS_BIN: z.string().min(1).default('egress'),
  TALLY_INGRESS_BIN: z.string().min(1).default('ingress'),
  LIVEKIT_URL: url(['http:', 'https:', 'ws:', 'wss:']).optional(),
  LIVEKIT_API_KEY: z.string().min(3).optional(),
  LIVEKIT_API_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  TALLY_RECORDINGS_DIR: z.string().min(1).optional(),
  TALLY_HOME: z.string().min(1).default('/var/lib/tally'),
  TALLY_CAPACITY_PROFILE: z.string().min(1).optional(),
  TALLY_NODE_IP: z.ipv4().default('127.0.0.1'),
  TALLY_EGRESS_TEMPLATE_PORT: port.default(7980),
  TALLY_INGRESS_RTMP_PORT: port.default(1935),
  TALLY_INGRESS_WHIP_PORT: port.default(8085),
  TALLY_INGRESS_RELAY_PORT: port.default(7892),
  TALLY_INGRESS_UDP_PORT: port.default(7885),
  // The TURN over TLS server (install.sh --domain: the origin's coturn) WHIP publishers are handed.
  TALLY_CLUSTER_TURN_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, 'must be a host name or IPv4 address')
    .optional(),
  TALLY_CLUSTER_TURN_PORT: port.default(5_349),
  TALLY_CLUSTER_TURN_SECRET: z.string().min(16).optional(),
});
type WorkerEnv = z.infer<typeof WorkerEnvSchema>;

export type WorkersConfig = Readonly<{
  runtime: WorkerRuntimeName;
  /** The node's Redis, as egress and ingress reach it (the agent's own). */
  redisUrl: string;
  /** The Sentinels egress and ingress follow the primary through, when Redis runs with Sentinel. */
  redisSentinel: RedisSentinel | undefined;
  idleGraceMs: number;
  dir: string;
  dockerSocket: string;
  images: Readonly<{ egress: string; ingress: string }>;
  binaries: Readonly<{ egress: string; ingress: string }>;
  /** Where egress and ingress reach livekit-server (ws:// or wss://). */
  livekit: Readonly<{ wsUrl: string; apiKey: string; apiSecret: string }> | undefined;
  recordingsDir: string;
  capacityProfile: string | undefined;
  nodeIp: string;
  /** The TURN over TLS server ingress hands WHIP publishers, with the secret it shares with it. */
  turn: Readonly<{ host: string; port: number; secret: string }> | undefined;
  ports: Readonly<{
    egressTemplate: number;
    ingressRtmp: number;
    ingressWhip: number;
    ingressRelay: number;
    ingressUdp: number;
  }>;
}>;

/** Throws naming what a runtime other than `none` is missing. */
export function workersConfig(e: WorkerEnv & Readonly<{ REDIS_URL: string }>, redisSentinel?: RedisSentinel): WorkersConfig {
  const livekit =
    e.LIVEKIT_URL && e.LIVEKIT_API_KEY && e.LIVEKIT_API_SECRET
      ? { wsUrl: e.LIVEKIT_URL.replace(/^http/, 'ws'), apiKey: e.LIVEKIT_API_KEY, apiSecret: e.LIVEKIT_API_SECRET }
      : undefined;
  if (e.TALLY_WORKER_RUNTIME !== 'none' && !livekit) {
    throw new Error(`TALLY_WORKER_RUNTIME=${e.TALLY_WORKER_RUNTIME} needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET`);
  }
  if ((e.TALLY_CLUSTER_TURN_HOST === undefined) !== (e.TALLY_CLUSTER_TURN_SECRET === undefined)) {
    throw new Error('TALLY_CLUSTER_TURN_HOST, TALLY_CLUSTER_TURN_SECRET: set both or neither');
  }
  return Object.freeze({
    runtime: e.TALLY_WORKER_RUNTIME,
    redisUrl: e.REDIS_URL,
    redisSentinel,
    idleGraceMs: e.TALLY_WORKER_IDLE_GRACE_S * 1_000,
    dir: e.TALLY_WORKERS_DIR ?? (e.TALLY_WORKER_RUNTIME === 'none' ? join(tmpdir(), 'tally-workers') : join(e.TALLY_HOME, 'workers')),
    dockerSocket: e.TALLY_DOCKER_SOCKET,
    images: { egress: e.TALLY_EGRESS_IMAGE, ingress: e.TALLY_INGRESS_IMAGE },
    binaries: { egress: e.TALLY_EGRESS_BIN, ingress: e.TALLY_INGRESS_BIN },
    livekit,
    recordingsDir: e.TALLY_RECORDINGS_DIR ?? join(e.TALLY_HOME, 'recordings'),
    capacityProfile: e.TALLY_CAPACITY_PROFILE,
    nodeIp: e.TALLY_NODE_IP,
    turn:
      e.TALLY_CLUSTER_TURN_HOST === undefined || e.TALLY_CLUSTER_TURN_SECRET === undefined
        ? undefined
        : { host: e.TALLY_CLUSTER_TURN_HOST, port: e.TALLY_CLUSTER_TURN_PORT, secret: e.TALLY_CLUSTER_TURN_SECRET },
    ports: {
      egressTemplate: e.TALLY_EGRESS_TEMPLATE_PORT,
      ingressRtmp: e.TALLY_INGRESS_RTMP_PORT,
      ingressWhip: e.TALLY_INGRESS_WHIP_PORT,
      ingressRelay: e.TALLY_INGRESS_RELAY_PORT,
      ingressUdp: e.TALLY_INGRESS_UDP_PORT,
    },
  });
}
