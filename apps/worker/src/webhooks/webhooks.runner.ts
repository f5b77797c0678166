import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { WebhookDispatcher } from './webhook-dispatcher.js';

/**
 * Starts the webhook dispatcher (deliveries are claimed from PostgreSQL, no queue consumer). Event
 * retention runs on the maintenance queue's schedule (`pruneEvents`).
 */
@Injectable()
export class WebhooksRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhooksRunner.name);

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.secretsKey === undefined) {
      this.logger.warn('TALLY_SECRETS_KEY is not set: webhook deliveries fail (and are retried) until it is');
    }
    await this.dispatcher.start();
  }

  /** Stops claiming deliveries and finishes the ones it holds, before Prisma and Redis close. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.dispatcher.stop();
  }
}
