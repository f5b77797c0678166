import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '@tally/config';
import { NodeRegistry } from '@tally/nodes';
import { Redis } from 'ioredis';
import type { Child } from './child.js';
import { inject } from 'vitest';
import { createTestDatabase, dropDatabase } from './database.js';
import { startEgress } from './egress.js';
import { ingressPorts, startIngress, type TestIngress } from './ingress.js';
import { startLivekit, type TestLivekit } from './livekit.js';
import { freePort, waitFor } from './ports.js';
import { startAppProcess } from './processes.js';
import { startRedis, type TestRedis } from './redis.js';

export type TestStack = Readonly<{
  config: Config;
  /** The environment a Tally process needs to run against this stack. */
  env: Readonly<Record<string, string>>;
  adminKey: string;
  redis: TestRedis;
  livekit: TestLivekit;
  /** The node the stack's agent heartbeats: the default 8 vCPU / 8 GB origin of the capacity model. */
  nodeId: string;
  agent: Child;
  /** LiveKit egress, when started with `egress: true`; supervised (restarted when it exits on its own). */
  egress?: Child;
  /** LiveKit ingress (RTMP and WHIP), when started with `ingress: true`; supervised like egress. */
  ingress?: TestIngress;
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
  /** A Postgres server holding the migrated template database; the vitest global setup's when absent (bench/ passes its own). */
  postgresUrl?: string;
  /** Serve livekit-server's Prometheus metrics on this port. */
  livekitPrometheusPort?: number;
}>;

/**
 * Real Postgres (a fresh database), Redis and livekit-server for one test file.
 * LiveKit's webhooks go to the port config.http.port, where the test starts the API.
 */
export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const serverUrl = options.postgresUrl ?? inject('postgresUrl');
  const databaseUrl = await createTestDatabase(serverUrl);
  const redis = await startRedis();
  const apiPort = await freePort();
  const nodeIp = process.env['TALLY_TEST_NODE_IP'] ?? '127.0.0.1';
  const ports = options.ingress ? await ingressPorts() : undefined;
  const livekit = await startLivekit({
    redisUrl: redis.url,
    nodeIp,
    webhookUrl: `http://127.0.0.1:${apiPort}/webhooks/livekit`,
    ...(ports === undefined ? {} : { ingress: ports }),
    ...(options.livekitPrometheusPort === undefined ? {} : { prometheusPort: options.livekitPrometheusPort }),
  });
  const egress = options.egress ? await startEgress({ livekit, redisUrl: redis.url, budget: TEST_NODE_BUDGET }) : undefined;
  const ingress = ports === undefined ? undefined : await startIngress({ livekit, redisUrl: redis.url, ports });
  const adminKey = `admin-${randomBytes(24).toString('hex')}`;
  const env: Record<string, string> = {
    TALLY_HOME: '/nonexistent',
    TALLY_HOST: '127.0.0.1',
    TALLY_PORT: String(apiPort),
    TALLY_ADMIN_KEY: adminKey,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    LIVEKIT_URL: livekit.url,
    LIVEKIT_PUBLIC_URL: livekit.wsUrl,
    LIVEKIT_API_KEY: livekit.apiKey,
    LIVEKIT_API_SECRET: livekit.apiSecret,
    TALLY_SECRETS_KEY: randomBytes(32).toString('hex'),
    TALLY_RECORDINGS_DIR: mkdtempSync(join(tmpdir(), 'tally-recordings-')),
    ...options.env,
  };
  const nodeId = `node-${randomBytes(4).toString('hex')}`;
  const agent = await startAgent({ ...env, ...TEST_NODE_BUDGET, TALLY_NODE_ID: nodeId, TALLY_HEARTBEAT_INTERVAL_S: '1' }, nodeId);
  return {
    config: loadConfig(env),
    env,
    adminKey,
    redis,
    livekit,
    nodeId,
    agent,
    ...(egress === undefined ? {} : { egress }),
    ...(ingress === undefined ? {} : { ingress }),
    async stop() {
      await agent.stop();
      await egress?.stop();
      await ingress?.stop();
      await livekit.stop();
      await redis.stop();
      await dropDatabase(serverUrl, databaseUrl);
    },
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
