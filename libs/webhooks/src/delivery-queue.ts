import { JOBS, QUEUES } from '@tally/contracts';
import { type JobsOptions, Queue } from 'bullmq';

/**
 * Job options of a delivery job. The delivery row, not the job, counts attempts and schedules
 * retries; BullMQ's own attempts only cover a processor that crashed on infrastructure (database
 * down). Finished jobs are dropped: the row is the log, and the outbox sweep re-queues any pending
 * delivery whose job is gone.
 */
export const DELIVERY_JOB_OPTIONS = {
  removeOnComplete: true,
  removeOnFail: true,
  attempts: 3,
  backoff: { type: 'exponential', delay: 5_000 },
} as const satisfies JobsOptions;

/** The adapter in front of the webhooks queue: one job per delivery, job id = delivery id. */
export class DeliveryQueue {
  private readonly queue: Queue;

  constructor(redisUrl: string) {
    this.queue = new Queue(QUEUES.webhooks, { connection: { url: redisUrl } });
  }

  /** Adds a job per delivery; a delivery that already has a job keeps it (the add is a no-op). */
  async enqueue(deliveryIds: readonly string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.queue.addBulk(
      deliveryIds.map((deliveryId) => ({
        name: JOBS.deliverWebhook.name,
        data: JOBS.deliverWebhook.payload.parse({ deliveryId }),
        opts: { ...DELIVERY_JOB_OPTIONS, jobId: deliveryId },
      })),
    );
  }

  /**
   * Makes sure each delivery has a live job (waiting, delayed or active): a missing job is added, a
   * finished one (completed or failed but kept) is replaced. Returns the ids that were (re)queued.
   */
  async ensureQueued(deliveryIds: readonly string[]): Promise<string[]> {
    const requeued: string[] = [];
    for (const deliveryId of deliveryIds) {
      const job = await this.queue.getJob(deliveryId);
      if (job) {
        const state = await job.getState();
        if (state !== 'completed' && state !== 'failed' && state !== 'unknown') continue;
        // A job another sweeper already replaced, or one just taken, refuses removal: leave it.
        if (
          !(await job.remove().then(
            () => true,
            () => false,
          ))
        )
          continue;
      }
      await this.enqueue([deliveryId]);
      requeued.push(deliveryId);
    }
    return requeued;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }

  /** Nest closes the connection with the application. */
  async onModuleDestroy(): Promise<void> {
    await this.close();
  }
}
