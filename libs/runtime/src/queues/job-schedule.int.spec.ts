import { Logger } from '@nestjs/common';
import { startRedis, type TestRedis, waitFor } from '@tally/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepScheduled, upsertSchedule } from './job-schedule.js';

describe(keepScheduled.name, () => {
  let redis: TestRedis;
  let connection: Redis;
  let queue: Queue;

  beforeAll(async () => {
    redis = await startRedis();
    connection = new Redis(redis.url);
    queue = new Queue('kept-schedule-test', { connection: { url: redis.url, maxRetriesPerRequest: null } });
  });

  afterAll(async () => {
    await queue?.close();
    connection?.disconnect();
    await redis?.stop();
  });

  it('registers a repeating job again after Redis lost its data, without a restart', async () => {
    const schedule = { queue, name: 'sweep', everyMs: 200 };
    await upsertSchedule(schedule);
    const stop = keepScheduled(schedule, new Logger('test'));
    try {
      await connection.flushall();
      expect(await queue.getJobScheduler('sweep')).toBeUndefined();

      const back = await waitFor('the schedule to be registered again', async () => queue.getJobScheduler('sweep'), 10_000);

      expect(back).toMatchObject({ key: 'sweep', every: 200 });
      // And it produces jobs again.
      await waitFor('a job of the schedule', async () => {
        const counts = await queue.getJobCounts('delayed', 'waiting', 'prioritized');
        return Object.values(counts).some((n) => n > 0) ? true : undefined;
      });
    } finally {
      stop();
    }
  });
});
