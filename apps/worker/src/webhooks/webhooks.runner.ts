import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { DelayedError, type Job, Worker } from 'bullmq';
import { Clock } from '../clock.js';
import { assertEveryJobHandled, handlerFor, type JobHandlers } from '../jobs/job-handlers.js';
import { OutboxSweeper } from './outbox-sweeper.service.js';
import { type DeliveryOutcome, WebhookDeliverer } from './webhook-deliverer.service.js';

/**
 * How the webhooks queue is consumed. A worker killed mid-delivery holds its jobs' locks for at
 * most `lockDuration`; another worker's stalled check (every `stalledInterval`) then puts them back,
 * so a crash delays deliveries by seconds. An attempt that outlives the lock is no problem: the lock
 * is renewed every lockDuration / 2 while the attempt runs.
 */
export const WEBHOOK_WORKER_OPTIONS = { concurrency: 8, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 3 } as const;

/** Consumes the webhooks queue and runs the outbox sweep (at startup, then every sweep interval). */
@Injectable()
export class WebhooksRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhooksRunner.name);
  private readonly handlers: JobHandlers<typeof QUEUES.webhooks>;
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    deliverer: WebhookDeliverer,
    private readonly sweeper: OutboxSweeper,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    const handlers = {
      deliverWebhook: async (payload: unknown) => deliverer.deliver(JOBS.deliverWebhook.payload.parse(payload).deliveryId),
    };
    assertEveryJobHandled(QUEUES.webhooks, handlers);
    this.handlers = handlers;
  }

  onApplicationBootstrap(): void {
    if (this.config.secretsKey === undefined) {
      this.logger.warn('TALLY_SECRETS_KEY is not set: webhook deliveries fail (and are retried) until it is');
    }
    this.worker = new Worker(QUEUES.webhooks, (job, token) => this.process(job, token), {
      connection: { url: this.config.redisUrl, maxRetriesPerRequest: null },
      ...WEBHOOK_WORKER_OPTIONS,
    });
    this.worker.on('failed', (job, error) => this.logger.error(`webhook job ${job?.id ?? '?'} failed: ${error.message}`));
    this.worker.on('error', (error) => this.logger.error(`webhooks worker: ${error.message}`));
    this.sweepNow();
    this.timer = setInterval(() => this.sweepNow(), this.config.sweepIntervalS * 1000);
  }

  /** Stops taking deliveries and finishes the ones it holds, before Prisma and Redis close. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
    await this.worker?.close();
  }

  /** A failed attempt moves its job to the delayed set until the row's next attempt time. */
  private async process(job: Job, token: string | undefined): Promise<DeliveryOutcome> {
    const outcome = (await handlerFor(QUEUES.webhooks, this.handlers, job.name)(job.data)) as DeliveryOutcome;
    if (outcome.kind === 'retry') {
      await job.moveToDelayed(outcome.at.getTime(), token);
      throw new DelayedError();
    }
    return outcome;
  }

  private sweepNow(): void {
    if (this.sweeping) return;
    this.sweeping = this.sweeper
      .sweep(this.clock.now())
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error(`outbox sweep failed: ${String(error)}`))
      .finally(() => {
        this.sweeping = undefined;
      });
  }
}
