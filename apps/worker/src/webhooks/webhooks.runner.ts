import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, type JobConsumerHost, runJob } from '@tally/runtime';
import { DelayedError, type Job } from 'bullmq';
import { Clock } from '../clock.js';
import { EventPruner } from './event-pruner.service.js';
import { OutboxSweeper } from './outbox-sweeper.service.js';
import { WebhookLanes } from './webhook-lanes.js';
import { type DeliveryOutcome, WebhookDeliverer } from './webhook-deliverer.service.js';

/**
 * Consumes the apps' webhook queues (through their lanes: per-app queues are opened at run time, so
 * this is no `@Processor`); runs the outbox sweep and event retention at startup, then every sweep interval.
 */
@Injectable()
export class WebhooksRunner implements JobConsumerHost, OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly consumes = QUEUES.webhooks;
  private readonly logger = new Logger(WebhooksRunner.name);
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly deliverer: WebhookDeliverer,
    private readonly sweeper: OutboxSweeper,
    private readonly lanes: WebhookLanes,
    private readonly pruner: EventPruner,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

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

  @HandlesJob('deliverWebhook')
  deliverWebhook({ deliveryId }: JobPayload<'deliverWebhook'>): Promise<DeliveryOutcome> {
    return this.deliverer.deliver(deliveryId);
  }

  /** A failed attempt moves its job to the delayed set until the row's next attempt time. */
  private async process(job: Job, token: string | undefined): Promise<DeliveryOutcome> {
    const outcome = (await runJob(this, job)) as DeliveryOutcome;
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
