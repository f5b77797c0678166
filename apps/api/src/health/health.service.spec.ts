import type { PrismaService } from '@tally/db';
import type { LivekitRoomClient } from '@tally/livekit';
import { describe, expect, it } from 'vitest';
import type { RedisConnection } from '../infra/infra.module.js';
import { HealthProbes } from './health.probes.js';
import { HealthService } from './health.service.js';

/** The dependencies at their adapters: Redis refuses with a message that must not reach the public. */
function setup() {
  const listed: (string[] | undefined)[] = [];
  const prisma = { $queryRaw: () => Promise.resolve([{ '?column?': 1 }]) } as unknown as PrismaService;
  const redis = { ping: () => Promise.reject(new Error('WRONGPASS invalid username-password pair for redis://:s3cret@10.0.0.5:6379')) };
  const livekit = {
    listRooms: (names?: string[]) => {
      listed.push(names);
      return Promise.resolve([]);
    },
  } as unknown as LivekitRoomClient;
  return { listed, sut: new HealthService(new HealthProbes(prisma, redis as unknown as RedisConnection, livekit)) };
}

describe(HealthService.name, () => {
  it('asks LiveKit about one named room, never for the list of every room', async () => {
    const { sut, listed } = setup();

    const health = await sut.check();

    expect(health.checks.livekit.ok).toBe(true);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toHaveLength(1);
  });

  it('says a dependency is unavailable without repeating what it answered', async () => {
    const { sut } = setup();

    const health = await sut.check();

    expect(health.status).toBe('degraded');
    expect(health.checks.redis).toMatchObject({ ok: false, error: 'unavailable' });
    expect(JSON.stringify(health)).not.toMatch(/WRONGPASS|s3cret|10\.0\.0\.5/);
  });
});
