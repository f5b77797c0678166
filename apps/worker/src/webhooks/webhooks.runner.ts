import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { DelayedError, type Job } from 'bullmq';
import { Clock } from '../clock.js';
import { assertEveryJobHandled, handlerFor, type JobHandlers } from '../jobs/job-handlers.js';
import { EventPruner } from './event-pruner.service.js';
import { OutboxSweeper } from './outbox-sweeper.service.js';
import { WebhookLanes } from './webhook-lanes.js';
import { type DeliveryOutcome, WebhookDeliverer } from './webhook-deliverer.service.js';

/** Consumes the apps' webhook queues (through their lanes); runs the outbox sweep and event retention at startup, then every sweep interval. */
@Injectable()
export class WebhooksRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhooksRunner.name);
  private readonly handlers: JobHandlers<typeof QUEUES.webhooks>;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    deliverer: WebhookDeliverer,
    private readonly sweeper: OutboxSweeper,
    private readonly lanes: WebhookLanes,
    private readonly pruner: EventPruner,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    const handlers = {
      deliverWebhook: async (payload: unknown) => deliverer.deliver(JOBS.deliverWebhook.payload.parse(payload).deliveryId),
    };
    assertEveryJobHandled(QUEUES.webhooks, handlers);
    this.handlers = handlers;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.secretsKey === undefined) {
      this.logger.warn('TALLY_SECRETS_KEY is not set: webhook deliveries fail (and are retried) until it is');
    }
    await this.lanes.start((job, token) => this.process(job, token));
    this.sweepNow();
    this.timer = setInterval(() => this.sweepNow(), this.config.sweepIntervalS * 1000);
  }

  /** Stops taking deliveries and finishes the ones it holds, before Prisma and Redis close. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
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
    const now = this.clock.now();
    this.sweeping = Promise.all([
      this.sweeper.sweep(now).catch((error: unknown) => this.logger.error(`outbox sweep failed: ${String(error)}`)),
      this.pruner.prune(now).catch((error: unknown) => this.logger.error(`event pruning failed: ${String(error)}`)),
    ])
      .then(() => undefined)
      .finally(() => {
        this.sweeping = undefined;
      });
  }
}
