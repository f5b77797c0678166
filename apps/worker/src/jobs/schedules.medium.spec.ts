import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { type Config, loadConfig } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { createTestDatabase, dropDatabase, startRedis, type TestRedis, waitFor } from '@tally/testing';
import { type Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorker } from '../bootstrap.js';
import { MaintenanceProcessor } from './maintenance.processor.js';

const EVERY_S = 1;

/** The time a job scheduler planned a run for: its job id is `repeat:<scheduler>:<millis>`. */
function plannedFor(job: Job): number {
  const millis = Number(job.id?.split(':').at(-1));
  if (!Number.isFinite(millis)) throw new Error(`not a scheduled job: ${job.id}`);
  return millis;
}

describe(`${MaintenanceProcessor.name} in two worker replicas`, () => {
  let redis: TestRedis;
  let databaseUrl: string;
  let config: Config;
  const replicas: INestApplicationContext[] = [];
  let maintenance: Queue | undefined;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase(inject('postgresUrl'));
    redis = await startRedis();
    config = loadConfig({
      TALLY_HOME: mkdtempSync(join(tmpdir(), 'tally-schedules-')),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      LIVEKIT_URL: 'http://127.0.0.1:7880',
      LIVEKIT_PUBLIC_URL: 'ws://127.0.0.1:7880',
      LIVEKIT_API_KEY: 'schedules-key',
      LIVEKIT_API_SECRET: 'schedules-secret-of-at-least-thirty-two-chars',
      TALLY_RECORDINGS_DIR: mkdtempSync(join(tmpdir(), 'tally-schedules-recordings-')),
      TALLY_SWEEP_INTERVAL_S: String(EVERY_S),
    });
  });
  afterAll(async () => {
    await maintenance?.close();
    for (const replica of replicas) await replica.close();
    await redis?.stop();
    if (databaseUrl) await dropDatabase(inject('postgresUrl'), databaseUrl);
  });

  it('runs event retention once per period for the cluster, not once per replica', async () => {
    replicas.push(await startWorker(config, { logger: false }));
    replicas.push(await startWorker(config, { logger: false }));
    maintenance = new Queue(QUEUES.maintenance, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    const queue = maintenance;

    const schedulers = (await queue.getJobSchedulers()).map((s) => s.key);
    expect(schedulers.filter((key) => key === JOBS.pruneEvents.name)).toHaveLength(1);
    // One maintenance job at a time in the cluster, as with one worker: the sweeps never overlap.
    expect(await queue.getGlobalConcurrency()).toBe(1);

    const runs = await waitFor(
      'four runs of event retention',
      async () => {
        const done = (await queue.getJobs(['completed'])).filter((job) => job.name === JOBS.pruneEvents.name);
        return done.length >= 4 ? done : undefined;
      },
      60_000,
    );

    // Each run is a different period: no two replicas ran the same one, and none ran two in one period.
    const planned = runs.map(plannedFor).sort((a, b) => a - b);
    expect(new Set(planned).size).toBe(planned.length);
    for (let i = 1; i < planned.length; i += 1) expect(planned[i]! - planned[i - 1]!).toBeGreaterThanOrEqual(EVERY_S * 1000);
    expect(runs.every((job) => job.returnvalue !== null && typeof job.returnvalue === 'object')).toBe(true);
  });
});
