import type { Provider } from '@nestjs/common';
import type { Config } from '@tally/config';
import { AddressPolicy, WebhookResolver, WebhookSender } from '@tally/webhooks';
import { EndpointHealthRepository } from './endpoint-health.repository.js';
import { EventPruner } from './event-pruner.service.js';
import { RetainedEventsRepository } from './retained-events.repository.js';
import { WebhookDeliverer } from './webhook-deliverer.service.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhooksRunner } from './webhooks.runner.js';

/** Delivery of app webhooks (the outbox the worker's own state changes stage events in comes from RuntimeModule). */
export function webhooksProviders(config: Config): Provider[] {
  return [
    { provide: WebhookSender, useFactory: () => new WebhookSender(new AddressPolicy(config.webhooks.allowCidrs), new WebhookResolver()) },
    WebhookDeliveriesRepository,
    EndpointHealthRepository,
    WebhookDeliverer,
    WebhookDispatcher,
    RetainedEventsRepository,
    EventPruner,
    WebhooksRunner,
  ];
}
