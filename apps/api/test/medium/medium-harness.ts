import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { loadConfig } from '@tally/config';
import type { NodeHeartbeat } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { LivekitEgressClient, LivekitIngressClient, LivekitRoomClient } from '@tally/livekit';
import { NodeRegistry } from '@tally/nodes';
import { createTestDatabase, dropDatabase, startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { ApiModule } from '../../src/app.module.js';
import { FakeLivekit } from './fake-livekit.js';

export const LIVEKIT_KEY = 'medium-key';
export const LIVEKIT_SECRET = 'medium-secret-of-at-least-thirty-two-chars';

export type MediumApi = Readonly<{
  get<T>(type: Type<T>): T;
  livekit: FakeLivekit;
  prisma: PrismaService;
  nodeId: string;
  stop(): Promise<void>;
}>;

/**
 * The API's real modules (services, repositories, admission) on a fresh Postgres database and a
 * throwaway Redis, with only LiveKit replaced at its three adapters, and one 8-core node
 * heartbeating so admission has somewhere to place work. No HTTP server: tests call services.
 */
export async function startMediumApi(env: Record<string, string> = {}): Promise<MediumApi> {
  const serverUrl = inject('postgresUrl');
  const databaseUrl = await createTestDatabase(serverUrl);
  const redis: TestRedis = await startRedis();
  const config = loadConfig({
    TALLY_HOME: mkdtempSync(join(tmpdir(), 'tally-medium-')),
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    LIVEKIT_URL: 'http://127.0.0.1:7880',
    LIVEKIT_PUBLIC_URL: 'ws://127.0.0.1:7880',
    LIVEKIT_API_KEY: LIVEKIT_KEY,
    LIVEKIT_API_SECRET: LIVEKIT_SECRET,
    TALLY_SECRETS_KEY: randomBytes(32).toString('hex'),
    TALLY_RECORDINGS_DIR: mkdtempSync(join(tmpdir(), 'tally-medium-recordings-')),
    ...env,
  });
  const livekit = new FakeLivekit();
  const module = await Test.createTestingModule({ imports: [ApiModule.forRoot(config)] })
    .overrideProvider(LivekitRoomClient)
    .useValue(livekit.roomClient)
    .overrideProvider(LivekitEgressClient)
    .useValue(livekit.egressClient)
    .overrideProvider(LivekitIngressClient)
    .useValue(livekit.ingressClient)
    .compile();
  const app: INestApplicationContext = await module.init();

  const nodeId = `medium-${randomBytes(4).toString('hex')}`;
  const connection = new Redis(redis.url);
  await new NodeRegistry(connection).heartbeat(heartbeat(nodeId), 600);
  connection.disconnect();

  return {
    get: (type) => app.get(type, { strict: false }),
    livekit,
    prisma: app.get(PrismaService, { strict: false }),
    nodeId,
    async stop() {
      await app.close();
      await redis.stop();
      await dropDatabase(serverUrl, databaseUrl);
    },
  };
}

function heartbeat(nodeId: string): NodeHeartbeat {
  const now = new Date().toISOString();
  return {
    nodeId,
    role: 'origin',
    budget: { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] },
    used: { cpuMillicores: 0, ramMb: 0 },
    labels: {},
    version: '0.1.0',
    startedAt: now,
    sentAt: now,
  };
}
