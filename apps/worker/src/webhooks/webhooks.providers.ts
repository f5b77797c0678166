import { Logger, type Provider } from '@nestjs/common';
import type { Config } from '@tally/config';
import { AddressPolicy, DeliveryQueue, WebhookOutbox, WebhookSender } from '@tally/webhooks';
import { EndpointHealthRepository } from './endpoint-health.repository.js';
import { EventPruner } from './event-pruner.service.js';
import { OutboxSweeper } from './outbox-sweeper.service.js';
import { WebhookDeliverer } from './webhook-deliverer.service.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookLanes } from './webhook-lanes.js';
import { WebhooksRunner } from './webhooks.runner.js';

/** Delivery of app webhooks, and the outbox the worker's own state changes (sweeps) stage events in. */
export function webhooksProviders(config: Config): Provider[] {
  return [
    { provide: DeliveryQueue, useFactory: () => new DeliveryQueue(config.redisUrl) },
    { provide: WebhookSender, useFactory: () => new WebhookSender(new AddressPolicy(config.webhooks.allowCidrs)) },
    {
      provide: WebhookOutbox,
      useFactory: (queue: DeliveryQueue) =>
        new WebhookOutbox(queue, {
          onFlushError: (error) => new Logger(WebhookOutbox.name).warn(`queueing after commit failed, the sweep will: ${String(error)}`),
        }),
      inject: [DeliveryQueue],
    },
    WebhookDeliveriesRepository,
    EndpointHealthRepository,
    WebhookDeliverer,
    OutboxSweeper,
    EventPruner,
    WebhookLanes,
    WebhooksRunner,
  ];
}
