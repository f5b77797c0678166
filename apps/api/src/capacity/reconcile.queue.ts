import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { Queue } from 'bullmq';

/** The adapter in front of the worker's maintenance queue, for sweeps an operator asks for. */
@Injectable()
export class ReconcileQueue implements OnApplicationShutdown {
  private readonly queue: Queue;

  constructor(@Inject(CONFIG) config: Config) {
    this.queue = new Queue(QUEUES.maintenance, { connection: { url: config.redisUrl, maxRetriesPerRequest: null } });
  }

  /** Queues one reconciliation sweep now; the worker runs it next to its scheduled ones. */
  async requestSweep(): Promise<string> {
    const job = await this.queue.add(JOBS.reconcileStreams.name, {}, { removeOnComplete: 100, removeOnFail: 500 });
    return job.id ?? '';
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
