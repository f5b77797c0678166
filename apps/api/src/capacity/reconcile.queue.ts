import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { JOBS, QUEUES } from '@tally/contracts';
import type { Queue } from 'bullmq';

/** The adapter in front of the worker's maintenance queue, for sweeps an operator asks for. */
@Injectable()
export class ReconcileQueue {
  constructor(@InjectQueue(QUEUES.maintenance) private readonly queue: Queue) {}

  /** Queues one reconciliation sweep now; the worker runs it next to its scheduled ones. */
  async requestSweep(): Promise<string> {
    const job = await this.queue.add(JOBS.reconcileStreams.name, JOBS.reconcileStreams.payload.parse({}), {
      removeOnComplete: 100,
      removeOnFail: 500,
    });
    return job.id ?? '';
  }
}
