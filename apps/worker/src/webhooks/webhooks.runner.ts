import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { Clock } from '../clock.js';
import { EventPruner } from './event-pruner.service.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

/**
 * Starts the webhook dispatcher (deliveries are claimed from PostgreSQL, no queue consumer) and runs
 * event retention at startup, then every sweep interval.
 */
@Injectable()
export class WebhooksRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhooksRunner.name);
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<void> | undefined;

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private readonly pruner: EventPruner,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.secretsKey === undefined) {
      this.logger.warn('TALLY_SECRETS_KEY is not set: webhook deliveries fail (and are retried) until it is');
    }
    await this.dispatcher.start();
    this.pruneNow();
    this.timer = setInterval(() => this.pruneNow(), this.config.sweepIntervalS * 1000);
  }

  /** Stops claiming deliveries and finishes the ones it holds, before Prisma and Redis close. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.dispatcher.stop();
    await this.pruning;
  }

  private pruneNow(): void {
    if (this.pruning) return;
    this.pruning = this.pruner
      .prune(this.clock.now())
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error(`event pruning failed: ${String(error)}`))
      .finally(() => {
        this.pruning = undefined;
      });
  }
}
