import { startRedis, type TestRedis } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryQueue } from './delivery-queue.js';

describe(DeliveryQueue.name, () => {
  let redis: TestRedis;
  let sut: DeliveryQueue;

  beforeAll(async () => {
    redis = await startRedis();
    sut = new DeliveryQueue(redis.url);
  });

  afterAll(async () => {
    await sut?.close();
    await redis?.stop();
  });

  it("sums every app's queue for /metrics and names the largest app backlog", async () => {
    const busy = ['a', 'b', 'c'].map((n) => ({ appId: 'app_busy', deliveryId: `dlv_busy_${n}` }));
    await sut.enqueue([...busy, { appId: 'app_quiet', deliveryId: 'dlv_quiet_a' }]);
    // Queueing the same delivery again adds nothing (job id = delivery id).
    await sut.enqueue([busy[0]!]);

    const counts = await sut.jobCounts(['waiting', 'active', 'delayed']);

    expect(counts).toEqual({ byState: { waiting: 4, active: 0, delayed: 0 }, apps: 2, largestAppBacklog: 3 });
  });
});
