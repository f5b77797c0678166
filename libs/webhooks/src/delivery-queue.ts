import { JOBS, WEBHOOK_APPS_KEY, WEBHOOK_WAKE_CHANNEL, webhookQueueOf } from '@tally/contracts';
import { type JobsOptions, type JobType, Queue } from 'bullmq';
import { Redis } from 'ioredis';

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

const BACKLOG_STATES: readonly JobType[] = ['waiting', 'prioritized', 'delayed'];

export type QueuedDelivery = Readonly<{ appId: string; deliveryId: string }>;

/** Delivery jobs over all apps' queues: per state, the number of apps with any, and the largest app backlog. */
export type DeliveryJobCounts = Readonly<{ byState: Readonly<Record<string, number>>; apps: number; largestAppBacklog: number }>;

/**
 * The adapter in front of the webhook queues: one BullMQ queue per app (`webhookQueueOf`), one job
 * per delivery, job id = delivery id. Queueing also records the app in WEBHOOK_APPS_KEY and wakes the
 * workers, which run a lane per app (docs/adr/0011-fair-webhook-delivery.md).
 */
export class DeliveryQueue {
  private readonly redis: Redis;
  private readonly queues = new Map<string, Queue>();

  constructor(redisUrl: string) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  }

  /** The app's queue, opened once over the shared connection. */
  queueOf(appId: string): Queue {
    let queue = this.queues.get(appId);
    if (!queue) {
      queue = new Queue(webhookQueueOf(appId), { connection: this.redis });
      this.queues.set(appId, queue);
    }
    return queue;
  }

  /** Adds a job per delivery; a delivery that already has a job keeps it (the add is a no-op). */
  async enqueue(deliveries: readonly QueuedDelivery[]): Promise<void> {
    for (const [appId, ids] of byApp(deliveries)) {
      await this.queueOf(appId).addBulk(
        ids.map((deliveryId) => ({
          name: JOBS.deliverWebhook.name,
          data: JOBS.deliverWebhook.payload.parse({ deliveryId }),
          opts: { ...DELIVERY_JOB_OPTIONS, jobId: deliveryId },
        })),
      );
      await this.announce(appId);
    }
  }

  /**
   * Makes sure each delivery has a live job (waiting, delayed or active): a missing job is added, a
   * finished one (completed or failed but kept) is replaced. Returns the ids that were (re)queued.
   *
   * One pipelined round trip reads every job's creation and finish times (a job hash has
   * `timestamp` from its creation, `finishedOn` once it completed or failed), so sweeping a backlog
   * of live jobs costs no command per job. A job that looks live is asked for its state only when
   * the caller marks the delivery `stale` (overdue for long): that finds a job whose hash outlived
   * its place in the queue (a Redis that lost part of its data).
   */
  async ensureQueued(deliveries: readonly (QueuedDelivery & { stale?: boolean })[]): Promise<string[]> {
    if (deliveries.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const d of deliveries) pipeline.hmget(this.queueOf(d.appId).toKey(d.deliveryId), 'timestamp', 'finishedOn');
    const replies = (await pipeline.exec()) ?? [];
    const requeued: QueuedDelivery[] = [];
    for (const [i, delivery] of deliveries.entries()) {
      const [error, fields] = replies[i] ?? [new Error('no reply from Redis')];
      if (error) throw error;
      const [createdAt, finishedAt] = fields as (string | null)[];
      if (createdAt !== null && finishedAt === null && !(delivery.stale && (await this.isOrphan(delivery)))) continue;
      // A job another sweeper already replaced, or one just taken, refuses removal: leave it.
      if (createdAt !== null && !(await this.removeJob(delivery))) continue;
      requeued.push({ appId: delivery.appId, deliveryId: delivery.deliveryId });
    }
    await this.enqueue(requeued);
    return requeued.map((d) => d.deliveryId);
  }

  /**
   * Sums `states` over the queues of the apps in WEBHOOK_APPS_KEY (an app leaves that set only once
   * its queue is empty), for /metrics: one figure per state, whatever the number of apps. An app's
   * backlog counts its jobs waiting, prioritized and delayed.
   */
  async jobCounts(states: readonly JobType[]): Promise<DeliveryJobCounts> {
    const byState: Record<string, number> = Object.fromEntries(states.map((s) => [s, 0]));
    let apps = 0;
    let largestAppBacklog = 0;
    const counted = [...new Set<JobType>([...states, ...BACKLOG_STATES])];
    for (const appId of await this.redis.smembers(WEBHOOK_APPS_KEY)) {
      const counts = await this.queueOf(appId).getJobCounts(...counted);
      for (const state of states) byState[state] = (byState[state] ?? 0) + (counts[state] ?? 0);
      if (Object.values(counts).some((n) => n > 0)) apps += 1;
      largestAppBacklog = Math.max(
        largestAppBacklog,
        BACKLOG_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0),
      );
    }
    return { byState, apps, largestAppBacklog };
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Nest closes the connection with the application. */
  async onModuleDestroy(): Promise<void> {
    await this.close();
  }

  private async isOrphan(delivery: QueuedDelivery): Promise<boolean> {
    const state = await this.queueOf(delivery.appId).getJobState(delivery.deliveryId);
    return state === 'completed' || state === 'failed' || state === 'unknown';
  }

  private async removeJob(delivery: QueuedDelivery): Promise<boolean> {
    const job = await this.queueOf(delivery.appId).getJob(delivery.deliveryId);
    if (!job) return true;
    return job.remove().then(
      () => true,
      () => false,
    );
  }

  /** Only a new member wakes the workers: a lane that is open already takes the job itself. */
  private async announce(appId: string): Promise<void> {
    if ((await this.redis.sadd(WEBHOOK_APPS_KEY, appId)) > 0) await this.redis.publish(WEBHOOK_WAKE_CHANNEL, appId);
  }
}

function byApp(deliveries: readonly QueuedDelivery[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const { appId, deliveryId } of deliveries) grouped.set(appId, [...(grouped.get(appId) ?? []), deliveryId]);
  return grouped;
}
