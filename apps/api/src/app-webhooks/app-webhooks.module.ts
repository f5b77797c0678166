import { Module } from '@nestjs/common';
import { AppWebhooksController } from './app-webhooks.controller.js';
import { AppWebhooksRepository } from './app-webhooks.repository.js';
import { AppWebhooksService } from './app-webhooks.service.js';
import { RedeliveryLimiter } from './redelivery-limiter.js';

/** Outbound webhooks of apps: secret rotation, the delivery log, redelivery. The outbox itself is in InfraModule. */
@Module({
  controllers: [AppWebhooksController],
  providers: [AppWebhooksService, AppWebhooksRepository, RedeliveryLimiter],
})
export class AppWebhooksModule {}
