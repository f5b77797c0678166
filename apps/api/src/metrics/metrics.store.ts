import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { QUEUES } from '@tally/contracts';
import { DeliveryQueue, type DeliveryJobCounts } from '@tally/webhooks';
import type { Queue } from 'bullmq';
import { RedisConnection } from '../infra/infra.module.js';
import { REPAIRS_KEY } from './metric-names.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/** The Redis side of the metrics: the worker's repair totals and the BullMQ queue depths. */
@Injectable()
export class MetricsStore {
  private readonly queues: readonly Queue[];
  private webhookCountsInFlight: Promise<DeliveryJobCounts> | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly deliveries: DeliveryQueue,
    @InjectQueue(QUEUES.maintenance) maintenance: Queue,
    @InjectQueue(QUEUES.recordings) recordings: Queue,
    @InjectQueue(QUEUES.transcodes) transcodes: Queue,
  ) {
    // Webhook deliveries are queued per app (docs/adr/0011-fair-webhook-delivery.md): summed under QUEUES.webhooks below.
    this.queues = [maintenance, recordings, transcodes];
  }

  async repairs(): Promise<Readonly<Record<string, number>>> {
    const raw = await this.redis.hgetall(REPAIRS_KEY);
    return Object.fromEntries(Object.entries(raw).map(([kind, n]) => [kind, Number(n)]));
  }

  async queueDepths(): Promise<{ queue: string; state: string; count: number }[]> {
    const perQueue = await Promise.all(
      this.queues.map(async (queue) => {
        const counts = await queue.getJobCounts(...JOB_STATES);
        return JOB_STATES.map((state) => ({ queue: queue.name, state, count: counts[state] ?? 0 }));
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
}
