import { startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
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

  it('requeues only deliveries whose job is missing, finished, or (when stale) lost from the queue', async () => {
    const appId = 'app_sweep';
    const d = (n: string, stale = false) => ({ appId, deliveryId: `dlv_sweep_${n}`, stale });
    await sut.enqueue([d('live'), d('finished'), d('orphan')]);
    const queue = sut.queueOf(appId);
    // A job kept after it completed (an older version kept them), and one whose place in the queue was lost.
    const client = new Redis(redis.url);
    await client.lrem(queue.toKey('wait'), 0, d('finished').deliveryId);
    await client.zadd(queue.toKey('completed'), Date.now(), d('finished').deliveryId);
    await client.hset(queue.toKey(d('finished').deliveryId), 'finishedOn', Date.now());
    await client.lrem(queue.toKey('wait'), 0, d('orphan').deliveryId);
    await client.quit();

    const fresh = await sut.ensureQueued([d('live'), d('finished'), d('orphan'), d('missing')]);
    const stale = await sut.ensureQueued([d('live', true), d('orphan', true)]);

    expect(fresh.sort()).toEqual(['dlv_sweep_finished', 'dlv_sweep_missing']);
    expect(stale).toEqual(['dlv_sweep_orphan']);
    expect(await queue.getJobState(d('orphan').deliveryId)).toBe('waiting');
    expect(await queue.getJobState(d('finished').deliveryId)).toBe('waiting');
  });
});
