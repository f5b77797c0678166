import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { QUEUES, WEBHOOK_DELIVERIES_QUEUE } from '@tally/contracts';
import type { Queue } from 'bullmq';
import { RedisConnection } from '../infra/infra.module.js';
import { REPAIRS_KEY } from './metric-names.js';
import { MetricsRepository, type PendingDeliveries } from './metrics.repository.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/** Webhook deliveries pending over all apps, per queue state; apps with any; the largest one app's backlog. */
export type WebhookBacklog = Readonly<{ byState: Readonly<Record<string, number>>; apps: number; largestAppBacklog: number }>;

/** The queue side of the metrics: the worker's repair totals, the BullMQ queue depths and the webhook backlog. */
@Injectable()
export class MetricsStore {
  private readonly queues: readonly Queue[];
  private webhookBacklogInFlight: Promise<WebhookBacklog> | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly repository: MetricsRepository,
    @InjectQueue(QUEUES.maintenance) maintenance: Queue,
    @InjectQueue(QUEUES.recordings) recordings: Queue,
    @InjectQueue(QUEUES.transcodes) transcodes: Queue,
  ) {
    this.queues = [maintenance, recordings, transcodes];
  }

  async repairs(): Promise<Readonly<Record<string, number>>> {
    const raw = await this.redis.hgetall(REPAIRS_KEY);
    return Object.fromEntries(Object.entries(raw).map(([kind, n]) => [kind, Number(n)]));
  }

  /** BullMQ's queues, and the webhook deliveries (rows in PostgreSQL, ADR 0019) counted as the queue `tally-webhooks`. */
  async queueDepths(): Promise<{ queue: string; state: string; count: number }[]> {
    const perQueue = await Promise.all(
      this.queues.map(async (queue) => {
        const counts = await queue.getJobCounts(...JOB_STATES);
        return JOB_STATES.map((state) => ({ queue: queue.name, state, count: counts[state] ?? 0 }));
      }),
    );
    const webhooks = await this.webhookBacklog();
    return [
      ...perQueue.flat(),
      ...JOB_STATES.map((state) => ({ queue: WEBHOOK_DELIVERIES_QUEUE, state, count: webhooks.byState[state] ?? 0 })),
    ];
  }

  /** A scrape runs its collectors concurrently: one grouped count of pending deliveries serves them all. */
  webhookBacklog(): Promise<WebhookBacklog> {
    this.webhookBacklogInFlight ??= this.repository
      .pendingDeliveries()
      .then(summarise)
      .finally(() => {
        this.webhookBacklogInFlight = undefined;
      });
    return this.webhookBacklogInFlight;
  }
}

function summarise(rows: readonly PendingDeliveries[]): WebhookBacklog {
  const byState = { waiting: 0, active: 0, delayed: 0 };
  let largestAppBacklog = 0;
  for (const r of rows) {
    byState.waiting += r.waiting;
    byState.active += r.active;
    byState.delayed += r.delayed;
    largestAppBacklog = Math.max(largestAppBacklog, r.waiting + r.delayed);
  }
  return { byState, apps: rows.length, largestAppBacklog };
}
