import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { QUEUES } from '@tally/contracts';
import type { Queue } from 'bullmq';
import { RedisConnection } from '../infra/infra.module.js';
import { REPAIRS_KEY } from './metric-names.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/** The Redis side of the metrics: the worker's repair totals and the BullMQ queue depths. */
@Injectable()
export class MetricsStore {
  private readonly queues: readonly Queue[];

  constructor(
    private readonly redis: RedisConnection,
    @InjectQueue(QUEUES.maintenance) maintenance: Queue,
    @InjectQueue(QUEUES.webhooks) webhooks: Queue,
    @InjectQueue(QUEUES.recordings) recordings: Queue,
    @InjectQueue(QUEUES.transcodes) transcodes: Queue,
  ) {
    this.queues = [maintenance, webhooks, recordings, transcodes];
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
    return perQueue.flat();
  }
}
