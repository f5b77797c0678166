import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { WEBHOOK_APPS_KEY, WEBHOOK_WAKE_CHANNEL, webhookQueueOf } from '@tally/contracts';
import { DeliveryQueue } from '@tally/webhooks';
import { type Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';

export type LaneProcessor = (job: Job, token: string | undefined) => Promise<unknown>;

/**
 * A worker killed mid-delivery holds its jobs' locks for at most `lockDuration`; another worker's
 * stalled check (every `stalledInterval`) then puts them back, so a crash delays those deliveries
 * by at most about 4 s. Until then the dead jobs count against the app's global concurrency, so
 * with a full lane nothing of that app moves: the lock is kept short for that. An attempt that
 * outlives the lock is no problem: the lock is renewed every lockDuration / 2 (one script per lane
 * for all its jobs) while the attempt runs. An event loop stalled for longer than the lock costs a
 * duplicate delivery (at-least-once), never a lost one.
 */
export const WEBHOOK_WORKER_OPTIONS = { lockDuration: 2_000, stalledInterval: 1_000, maxStalledCount: 3 } as const;

/** How often lanes are reconciled with WEBHOOK_APPS_KEY, and how long an empty lane stays open. */
const CHECK_MS = 5_000;
const IDLE_MS = 60_000;

type Lane = { worker: Worker; lastActiveAt: number };

/**
 * One BullMQ worker per app with deliveries (a lane), each with at most
 * TALLY_WEBHOOK_APP_CONCURRENCY attempts in flight (also set as the queue's global concurrency, so
 * the cap holds across worker processes). A receiver that never answers fills only its own app's
 * lane; every other app's jobs are taken by their own lanes at once. Lanes open when the outbox
 * announces an app (pub/sub, and the apps set every few seconds) and close after a minute empty.
 */
@Injectable()
export class WebhookLanes implements OnApplicationShutdown {
  private readonly logger = new Logger(WebhookLanes.name);
  private readonly lanes = new Map<string, Lane>();
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private processor: LaneProcessor | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(
    private readonly queues: DeliveryQueue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
    this.subscriber = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  }

  async start(processor: LaneProcessor): Promise<void> {
    this.processor = processor;
    this.subscriber.on('message', (_channel: string, appId: string) => this.open(appId));
    await this.subscriber.subscribe(WEBHOOK_WAKE_CHANNEL);
    await this.reconcile();
    this.timer = setInterval(() => void this.reconcile(), CHECK_MS);
  }

  /** Apps with an open lane (for tests and metrics). */
  openApps(): string[] {
    return [...this.lanes.keys()];
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    await Promise.all([...this.lanes.values()].map((lane) => lane.worker.close()));
    this.lanes.clear();
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private open(appId: string): void {
    if (this.closing || this.lanes.has(appId) || this.processor === undefined) return;
    const processor = this.processor;
    const concurrency = this.config.webhooks.appConcurrency;
    const lane: Lane = { lastActiveAt: Date.now(), worker: undefined as unknown as Worker };
    lane.worker = new Worker(
      webhookQueueOf(appId),
      (job, token) => {
        lane.lastActiveAt = Date.now();
        return processor(job, token);
      },
      { connection: this.redis, concurrency, ...WEBHOOK_WORKER_OPTIONS },
    );
    lane.worker.on('failed', (job, error) => this.logger.error(`webhook job ${job?.id ?? '?'} of ${appId} failed: ${error.message}`));
    lane.worker.on('error', (error) => this.logger.error(`webhook lane ${appId}: ${error.message}`));
    this.lanes.set(appId, lane);
    void this.queues
      .queueOf(appId)
      .setGlobalConcurrency(concurrency)
      .catch((error: unknown) => this.logger.warn(`global concurrency of ${appId}: ${String(error)}`));
  }

  private async reconcile(): Promise<void> {
    try {
      for (const appId of await this.redis.smembers(WEBHOOK_APPS_KEY)) this.open(appId);
      const idle = [...this.lanes.entries()].filter(([, lane]) => Date.now() - lane.lastActiveAt > IDLE_MS);
      for (const [appId, lane] of idle) await this.closeIfEmpty(appId, lane);
    } catch (error) {
      this.logger.warn(`webhook lanes: ${String(error)}`);
    }
  }

  /** Leaves the apps set before the last look, so a job added meanwhile re-announces the app. */
  private async closeIfEmpty(appId: string, lane: Lane): Promise<void> {
    const queue = this.queues.queueOf(appId);
    const pending = async () =>
      Object.values(await queue.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children')).reduce((a, b) => a + b, 0);
    if ((await pending()) > 0) return void (lane.lastActiveAt = Date.now());
    await this.redis.srem(WEBHOOK_APPS_KEY, appId);
    if ((await pending()) > 0) {
      await this.redis.sadd(WEBHOOK_APPS_KEY, appId);
      lane.lastActiveAt = Date.now();
      return;
    }
    this.lanes.delete(appId);
    await lane.worker.close();
  }
}
