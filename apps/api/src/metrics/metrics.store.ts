import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { QUEUES, type QueueName } from '@tally/contracts';
import { Queue } from 'bullmq';
import { RedisConnection } from '../infra/infra.module.js';
import { REPAIRS_KEY } from './metric-names.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/** The Redis side of the metrics: the worker's repair totals and the BullMQ queue depths. */
@Injectable()
export class MetricsStore implements OnApplicationShutdown {
  private readonly queues: readonly Queue[];

  constructor(
    private readonly redis: RedisConnection,
    @Inject(CONFIG) config: Config,
  ) {
    const connection = { url: config.redisUrl, maxRetriesPerRequest: null };
    this.queues = Object.values(QUEUES).map((name) => new Queue(name, { connection }));
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
    return perQueue.flat();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
