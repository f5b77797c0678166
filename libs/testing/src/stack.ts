import { randomBytes } from 'node:crypto';
import { type Config, loadConfig } from '@tally/config';
import { inject } from 'vitest';
import { createTestDatabase, dropDatabase } from './database.js';
import { startLivekit, type TestLivekit } from './livekit.js';
import { freePort } from './ports.js';
import { startRedis, type TestRedis } from './redis.js';

export type TestStack = Readonly<{
  config: Config;
  /** The environment a Tally process needs to run against this stack. */
  env: Readonly<Record<string, string>>;
  adminKey: string;
  redis: TestRedis;
  livekit: TestLivekit;
  stop(): Promise<void>;
}>;

export type StackOptions = Readonly<{ env?: Record<string, string> }>;

/**
 * Real Postgres (a fresh database), Redis and livekit-server for one test file.
 * LiveKit's webhooks go to the port config.http.port, where the test starts the API.
 */
export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const serverUrl = inject('postgresUrl');
  const databaseUrl = await createTestDatabase(serverUrl);
  const redis = await startRedis();
  const apiPort = await freePort();
  const nodeIp = process.env['TALLY_TEST_NODE_IP'] ?? '127.0.0.1';
  const livekit = await startLivekit({ redisUrl: redis.url, nodeIp, webhookUrl: `http://127.0.0.1:${apiPort}/webhooks/livekit` });
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
    ...options.env,
  };
  return {
    config: loadConfig(env),
    env,
    adminKey,
    redis,
    livekit,
    async stop() {
      await livekit.stop();
      await redis.stop();
      await dropDatabase(serverUrl, databaseUrl);
    },
  };
}
