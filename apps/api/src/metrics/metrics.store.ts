import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { QUEUES, type QueueName } from '@tally/contracts';
import { DeliveryQueue, type DeliveryJobCounts } from '@tally/webhooks';
import { Queue } from 'bullmq';
import { RedisConnection } from '../infra/infra.module.js';
import { REPAIRS_KEY } from './metric-names.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/** The Redis side of the metrics: the worker's repair totals and the BullMQ queue depths. */
@Injectable()
export class MetricsStore implements OnApplicationShutdown {
  private readonly queues: readonly Queue[];
  private webhookCountsInFlight: Promise<DeliveryJobCounts> | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly deliveries: DeliveryQueue,
    @Inject(CONFIG) config: Config,
  ) {
    const connection = { url: config.redisUrl, maxRetriesPerRequest: null };
    // Webhook deliveries are queued per app (one queue each, docs/adr/0011-fair-webhook-delivery.md): they are summed under QUEUES.webhooks.
    this.queues = Object.values(QUEUES)
      .filter((name) => name !== QUEUES.webhooks)
      .map((name) => new Queue(name, { connection }));
  }

  async repairs(): Promise<Readonly<Record<string, number>>> {
    const raw = await this.redis.hgetall(REPAIRS_KEY);
    return Object.fromEntries(Object.entries(raw).map(([kind, n]) => [kind, Number(n)]));
  }

  async queueDepths(): Promise<{ queue: QueueName; state: string; count: number }[]> {
    const perQueue = await Promise.all(
      this.queues.map(async (queue) => {
        const counts = await queue.getJobCounts(...JOB_STATES);
        return JOB_STATES.map((state) => ({ queue: queue.name as QueueName, state, count: counts[state] ?? 0 }));
      }),
    );
    const webhooks = await this.webhookCounts();
    return [...perQueue.flat(), ...JOB_STATES.map((state) => ({ queue: QUEUES.webhooks, state, count: webhooks.byState[state] ?? 0 }))];
  }

  /** The per-app webhook queues together: apps with deliveries queued, and the largest one app's backlog. */
  async webhookLanes(): Promise<{ apps: number; largestAppBacklog: number }> {
    return this.webhookCounts();
  }

  /** A scrape runs its collectors concurrently: one pass over the apps' queues serves them all. */
  private webhookCounts(): Promise<DeliveryJobCounts> {
    this.webhookCountsInFlight ??= this.deliveries.jobCounts(JOB_STATES).finally(() => {
      this.webhookCountsInFlight = undefined;
    });
    return this.webhookCountsInFlight;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
