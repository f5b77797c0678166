import { Logger, type Provider } from '@nestjs/common';
import type { Config } from '@tally/config';
import { AddressPolicy, DeliveryWake, WebhookOutbox, WebhookResolver, WebhookSender } from '@tally/webhooks';
import { EndpointHealthRepository } from './endpoint-health.repository.js';
import { EventPruner } from './event-pruner.service.js';
import { WebhookDeliverer } from './webhook-deliverer.service.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhooksRunner } from './webhooks.runner.js';

/** Delivery of app webhooks, and the outbox the worker's own state changes (sweeps) stage events in. */
export function webhooksProviders(config: Config): Provider[] {
  return [
    { provide: DeliveryWake, useFactory: () => new DeliveryWake(config.redisUrl) },
    { provide: WebhookSender, useFactory: () => new WebhookSender(new AddressPolicy(config.webhooks.allowCidrs), new WebhookResolver()) },
    {
      provide: WebhookOutbox,
      useFactory: (wake: DeliveryWake) =>
        new WebhookOutbox(wake, {
          onFlushError: (error) =>
            new Logger(WebhookOutbox.name).warn(`waking the dispatchers failed, their poll will find it: ${String(error)}`),
        }),
      inject: [DeliveryWake],
    },
    WebhookDeliveriesRepository,
    EndpointHealthRepository,
    WebhookDeliverer,
    WebhookDispatcher,
    EventPruner,
    WebhooksRunner,
  ];
}
