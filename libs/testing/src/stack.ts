import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type Config, loadConfig } from '@tally/config';
import { NodeRegistry } from '@tally/nodes';
import { Redis } from 'ioredis';
import type { Child } from './child.js';
import { inject } from 'vitest';
import { createTestDatabase, dropDatabase } from './database.js';
import { startEgress, type TestEgress } from './egress.js';
import { type IngressPorts, ingressPorts, startIngress, type TestIngress } from './ingress.js';
import { startCoturn, type TestCoturn, type TestTurn } from './coturn.js';
import { startLivekit, type TestLivekit } from './livekit.js';
import { startObjectStore, type TestObjectStore } from './object-store.js';
import { freePort, waitFor } from './ports.js';
import { startAppProcess } from './processes.js';
import { startRedis, type TestRedis } from './redis.js';
import { startRedisSentinelGroup, type TestRedisSentinelGroup } from './redis-sentinel.js';
import { toolPath } from './tools.js';

export type TestStack = Readonly<{
  config: Config;
  /** The environment a Tally process needs to run against this stack. */
  env: Readonly<Record<string, string>>;
  adminKey: string;
  redis: TestRedis;
  /** The primary, replica and Sentinels, when started with `redisSentinel: true` (`redis` is then its first primary). */
  redisSentinel?: TestRedisSentinelGroup;
  livekit: TestLivekit;
  /** The node the stack's agent heartbeats: the default 8 vCPU / 8 GB origin of the capacity model. */
  nodeId: string;
  agent: Child;
  /** LiveKit egress, when started with `egress: true`; supervised (restarted when it exits on its own). */
  egress?: TestEgress;
  /** LiveKit ingress (RTMP and WHIP), when started with `ingress: true`; supervised like egress. */
  ingress?: TestIngress;
  /** The S3 server recordings go to, when started with `objectStore: true` (TALLY_S3_* point at it). */
  objectStore?: TestObjectStore;
  /** coturn, the TURN over TLS server, when started with `turn`. */
  coturn?: TestCoturn;
  stop(): Promise<void>;
}>;

/** The agent's budget overrides: the figures the capacity model's defaults are stated for. */
export const TEST_NODE_BUDGET = { TALLY_NODE_CPU_MILLICORES: '8000', TALLY_NODE_RAM_MB: '8192', TALLY_NODE_NIC_MBPS: '1000' } as const;

export type StackOptions = Readonly<{
  env?: Record<string, string>;
  /** Also run LiveKit egress, its admission derived from TEST_NODE_BUDGET like the agent's node. */
  egress?: boolean;
  /** Also run LiveKit ingress; livekit-server then announces its RTMP / WHIP URLs on the node IP. */
  ingress?: boolean;
  /**
   * Also run a real S3 server with one bucket, and record into it (TALLY_S3_* in `env`); `nodeKeys`:
   * as install.sh --object-store runs it, with the key broker that gives joined nodes keys of their own.
   */
  objectStore?: boolean | 'nodeKeys';
  /**
   * Let the agent run egress and ingress on demand with this runtime (instead of `egress` / `ingress`
   * running them for the whole file); `docker` also needs TALLY_DOCKER_SOCKET in `env`.
   */
  workers?: 'native' | 'docker';
  /** A Postgres server holding the migrated template database; the vitest global setup's when absent (bench/ passes its own). */
  postgresUrl?: string;
  /** Serve livekit-server's Prometheus metrics on this port. */
  livekitPrometheusPort?: number;
  /** The agent's budget instead of TEST_NODE_BUDGET (a benchmark that holds thousands of streams at once). */
  nodeBudget?: Readonly<Record<keyof typeof TEST_NODE_BUDGET, string>>;
  /**
   * Run Redis as a primary, a replica and three Sentinels, and every process (Tally's, livekit-server)
   * through the Sentinels (REDIS_SENTINELS in `env`).
   */
  redisSentinel?: boolean;
  /**
   * TURN as `install.sh --domain` runs it: coturn over TLS, handed to participants by livekit-server
   * and to WHIP publishers by ingress, and livekit-server's TURN over UDP. Tokens then carry the
   * signalling URL on the node IP, for clients in their own namespaces.
   */
  turn?: TestTurn;
}>;

/**
 * Real Postgres (a fresh database), Redis and livekit-server for one test file.
 * LiveKit's webhooks go to the port config.http.port, where the test starts the API.
 */
export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const serverUrl = options.postgresUrl ?? inject('postgresUrl');
  const databaseUrl = await createTestDatabase(serverUrl);
  const redisSentinel = options.redisSentinel ? await startRedisSentinelGroup() : undefined;
  const redis: TestRedis = redisSentinel ?? (await startRedis());
  const apiPort = await freePort();
  const nodeIp = process.env['TALLY_TEST_NODE_IP'] ?? '127.0.0.1';
  const ports = options.ingress || options.workers ? await ingressPorts() : undefined;
  const coturn = options.turn === undefined ? undefined : await startCoturn(options.turn, nodeIp);
  const turnServer = coturn === undefined ? undefined : { host: coturn.host, port: coturn.port, secret: coturn.secret };
  const livekit = await startLivekit({
    redisUrl: redis.url,
    ...(redisSentinel === undefined ? {} : { redisSentinel: redisSentinel.sentinel }),
    nodeIp,
    webhookUrl: `http://127.0.0.1:${apiPort}/webhooks/livekit`,
    ...(ports === undefined ? {} : { ingress: ports }),
    ...(options.livekitPrometheusPort === undefined ? {} : { prometheusPort: options.livekitPrometheusPort }),
    ...(turnServer === undefined ? {} : { turn: turnServer }),
  });
  const egress = options.egress
    ? await startEgress({
        livekit,
        redisUrl: redis.url,
        ...(redisSentinel === undefined ? {} : { redisSentinel: redisSentinel.sentinel }),
        budget: TEST_NODE_BUDGET,
      })
    : undefined;
  const ingress = options.ingress
    ? await startIngress({ livekit, redisUrl: redis.url, ports: ports!, ...(turnServer === undefined ? {} : { turn: turnServer }) })
    : undefined;
  const objectStore = options.objectStore ? await startObjectStore({ nodeKeys: options.objectStore === 'nodeKeys' }) : undefined;
  const adminKey = `admin-${randomBytes(24).toString('hex')}`;
  const env: Record<string, string> = {
    TALLY_HOME: '/nonexistent',
    TALLY_HOST: '127.0.0.1',
    TALLY_PORT: String(apiPort),
    TALLY_ADMIN_KEY: adminKey,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    LIVEKIT_URL: livekit.url,
    LIVEKIT_PUBLIC_URL: options.turn ? livekit.nodeWsUrl : livekit.wsUrl,
    LIVEKIT_API_KEY: livekit.apiKey,
    LIVEKIT_API_SECRET: livekit.apiSecret,
    TALLY_SECRETS_KEY: randomBytes(32).toString('hex'),
    TALLY_RECORDINGS_DIR: mkdtempSync(join(tmpdir(), 'tally-recordings-')),
    // Tests' webhook receivers listen on loopback, which production refuses by default.
    TALLY_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
    // No disk reserve file on the host's disk for every test's worker (the disk tests set their own).
    TALLY_DISK_RESERVE_MAX_MB: '0',
    ...(options.workers ? await agentWorkerEnv(options.workers, nodeIp, ports!) : {}),
    ...objectStore?.env,
    ...redisSentinel?.env,
    // As install.sh --domain writes them: joined media nodes and the agent's ingress hand out coturn.
    ...(turnServer === undefined
      ? {}
      : {
          TALLY_CLUSTER_TURN_HOST: turnServer.host,
          TALLY_CLUSTER_TURN_PORT: String(turnServer.port),
          TALLY_CLUSTER_TURN_SECRET: turnServer.secret,
        }),
    ...options.env,
  };
  const nodeId = `node-${randomBytes(4).toString('hex')}`;
  const agent = await startAgent(
    { ...env, ...(options.nodeBudget ?? TEST_NODE_BUDGET), TALLY_NODE_ID: nodeId, TALLY_HEARTBEAT_INTERVAL_S: '1' },
    nodeId,
  );
  return {
    config: loadConfig(env),
    env,
    adminKey,
    redis,
    ...(redisSentinel === undefined ? {} : { redisSentinel }),
    ...(coturn === undefined ? {} : { coturn }),
    livekit,
    nodeId,
    agent,
    ...(egress === undefined ? {} : { egress }),
    ...(ingress === undefined ? {} : { ingress }),
    ...(objectStore === undefined ? {} : { objectStore }),
    async stop() {
      await agent.stop();
      await egress?.stop();
      await ingress?.stop();
      await objectStore?.stop();
      await livekit.stop();
      await coturn?.stop();
      await redis.stop();
      await dropDatabase(serverUrl, databaseUrl);
    },
  };
}

/** What the agent needs to run egress and ingress itself: free ports, the provisioned binaries, its own work dir. */
async function agentWorkerEnv(runtime: 'native' | 'docker', nodeIp: string, ports: IngressPorts): Promise<Record<string, string>> {
  const bin = dirname(toolPath('lk'));
  return {
    TALLY_WORKER_RUNTIME: runtime,
    TALLY_WORKERS_DIR: mkdtempSync(join(tmpdir(), 'tally-workers-')),
    TALLY_EGRESS_BIN: join(bin, 'egress'),
    TALLY_INGRESS_BIN: join(bin, 'ingress'),
    TALLY_NODE_IP: nodeIp,
    TALLY_EGRESS_TEMPLATE_PORT: String(await freePort()),
    TALLY_INGRESS_RTMP_PORT: String(ports.rtmpPort),
    TALLY_INGRESS_WHIP_PORT: String(ports.whipPort),
    TALLY_INGRESS_RELAY_PORT: String(await freePort()),
    TALLY_INGRESS_UDP_PORT: String(await freePort()),
  };
}

/** The real node agent as its own process; resolves once its first heartbeat is in Redis. */
async function startAgent(env: Record<string, string>, nodeId: string): Promise<Child> {
  const agent = await startAppProcess('agent', env, join(tmpdir(), `tally-agent-${nodeId}.log`));
  const redis = new Redis(env['REDIS_URL'] ?? '', { maxRetriesPerRequest: 1 });
  try {
    const registry = new NodeRegistry(redis);
    await waitFor(`agent ${nodeId} heartbeat`, async () => ((await registry.get(nodeId)) ? true : undefined), 30_000);
  } finally {
    redis.disconnect();
  }
  return agent;
}
