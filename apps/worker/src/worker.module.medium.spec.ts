import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleLogger, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { type Config, loadConfig } from '@tally/config';
import { JOBS, type JobPayload, QUEUES } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { HandlesJob, RedisConnection } from '@tally/runtime';
import { createTestDatabase, dropDatabase, startRedis, type TestRedis, waitFor } from '@tally/testing';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorker } from './bootstrap.js';
import { RecordingFinaliser } from './recordings/recording-finaliser.service.js';
import { WorkerModule } from './worker.module.js';

/** A second handler for a job the worker already handles, as a careless change would add one. */
class SecondFinaliser {
  readonly consumes = QUEUES.recordings;

  @HandlesJob('finaliseRecording')
  finalise(_payload: JobPayload<'finaliseRecording'>): Promise<void> {
    return Promise.resolve();
  }
}

/** A finalisation that waits to be released, then uses Prisma and Redis, as a real one does at its end. */
class HeldFinaliser {
  private markStarted = () => {};
  release = () => {};
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));

  using(prisma: PrismaService, redis: RedisConnection) {
    return {
      finalise: async (recordingId: string) => {
        this.markStarted();
        await this.released;
        const rows = await prisma.$queryRaw<{ one: number }[]>`SELECT 1 AS one`;
        return { recordingId, databaseAnswered: rows[0]?.one === 1, redisAnswered: await redis.ping() };
      },
      fail: () => Promise.resolve(),
    };
  }
}

describe(WorkerModule.name, () => {
  let redis: TestRedis;
  let databaseUrl: string;
  let config: Config;
  let sut: INestApplicationContext | undefined;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase(inject('postgresUrl'));
    redis = await startRedis();
    config = loadConfig({
      TALLY_HOME: mkdtempSync(join(tmpdir(), 'tally-worker-module-')),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      LIVEKIT_URL: 'http://127.0.0.1:7880',
      LIVEKIT_PUBLIC_URL: 'ws://127.0.0.1:7880',
      LIVEKIT_API_KEY: 'worker-module-key',
      LIVEKIT_API_SECRET: 'worker-module-secret-of-at-least-thirty-two-chars',
      TALLY_RECORDINGS_DIR: mkdtempSync(join(tmpdir(), 'tally-worker-module-recordings-')),
    });
  });
  afterAll(async () => {
    await sut?.close();
    await redis?.stop();
    if (databaseUrl) await dropDatabase(inject('postgresUrl'), databaseUrl);
  });

  it('starts as wired: one handler per job, the sweeps scheduled, and a queued job run by its processor', async () => {
    sut = await startWorker(config, { logger: false });

    const transcodes = new Queue(QUEUES.transcodes, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    const maintenance = new Queue(QUEUES.maintenance, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    try {
      expect((await maintenance.getJobSchedulers()).map((s) => s.key)).toEqual(
        expect.arrayContaining([JOBS.reconcileStreams.name, JOBS.pruneEvents.name]),
      );
      expect((await transcodes.getJobSchedulers()).map((s) => s.key)).toEqual([JOBS.sweepLadders.name]);
      const job = await transcodes.add(JOBS.sweepLadders.name, {});
      const finished = await waitFor('the ladder sweep to finish', async () => {
        const current = await transcodes.getJob(job.id ?? '');
        return current?.finishedOn === undefined ? undefined : current;
      });
      expect(finished.failedReason).toBeUndefined();
      expect(finished.returnvalue).toEqual({ laddersFailedOver: 0 });
    } finally {
      await transcodes.close();
      await maintenance.close();
    }
    await sut.close();
    sut = undefined;
  });

  it('on shutdown finishes the job it holds, with Prisma and Redis still open, before they close', async () => {
    const held = new HeldFinaliser();
    const module = await Test.createTestingModule({ imports: [WorkerModule.forRoot({ ...config, logLevel: 'silent' })] })
      .overrideProvider(RecordingFinaliser)
      .useFactory({
        factory: (prisma: PrismaService, redis: RedisConnection) => held.using(prisma, redis),
        inject: [PrismaService, RedisConnection],
      })
      .setLogger(new ConsoleLogger({ logLevels: [] }))
      .compile();
    const app = await module.init();
    const recordings = new Queue(QUEUES.recordings, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    try {
      const job = await recordings.add(JOBS.finaliseRecording.name, { recordingId: 'rec_held' }, { jobId: 'rec_held' });
      await held.started;

      let closed = false;
      const closing = app.close().then(() => (closed = true));
      // Shutdown waits for the job: nothing has closed yet.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(closed).toBe(false);
      held.release();
      await closing;

      const finished = await recordings.getJob(job.id ?? '');
      expect(finished?.failedReason).toBeUndefined();
      expect(finished?.returnvalue).toEqual({ recordingId: 'rec_held', databaseAnswered: true, redisAnswered: 'PONG' });
    } finally {
      await recordings.close();
    }
  });

  it('refuses to start when a job has a second handler, naming the job and both handlers', async () => {
    const module = await Test.createTestingModule({
      imports: [WorkerModule.forRoot({ ...config, logLevel: 'silent' })],
      providers: [SecondFinaliser],
    })
      .setLogger(new ConsoleLogger({ logLevels: [] }))
      .compile();

    await expect(module.init()).rejects.toThrow(
      'job recording.finalise (tally-recordings) has 2 handlers: RecordingsProcessor.finaliseRecording, SecondFinaliser.finalise',
    );
    await module.close();
  });
});
