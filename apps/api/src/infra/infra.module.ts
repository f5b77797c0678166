import { type DynamicModule, Global, Logger, Module } from '@nestjs/common';
import type { Config } from '@tally/config';
import { LivekitWebhookVerifier } from '@tally/livekit';
import { QUEUES, STATIC_QUEUES } from '@tally/contracts';
import { QueuesModule, RuntimeModule } from '@tally/runtime';
import { AddressPolicy, DeliveryQueue, WebhookOutbox } from '@tally/webhooks';

export { RedisConnection } from '@tally/runtime';

/** The shared runtime (config, Prisma, Redis, ledger, registry, LiveKit, clock, queues) plus the API's own adapters. */
@Global()
@Module({})
export class InfraModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: InfraModule,
      imports: [
        RuntimeModule.forRoot(config),
        // The API only produces. QUEUES.webhooks (the family's name, not an app's queue) is registered for its depth in /metrics.
        QueuesModule.forRoot({ queues: [...STATIC_QUEUES, QUEUES.webhooks] }),
      ],
      providers: [
        { provide: LivekitWebhookVerifier, useFactory: () => new LivekitWebhookVerifier(config.livekit) },
        { provide: AddressPolicy, useFactory: () => new AddressPolicy(config.webhooks.allowCidrs) },
        { provide: DeliveryQueue, useFactory: () => new DeliveryQueue(config.redisUrl) },
        {
          provide: WebhookOutbox,
          useFactory: (queue: DeliveryQueue) => new WebhookOutbox(queue, { onFlushError }),
          inject: [DeliveryQueue],
        },
      ],
      exports: [LivekitWebhookVerifier, WebhookOutbox, AddressPolicy],
    };
  }
}

/** Queueing after commit failed: the delivery row is pending, so the worker's outbox sweep queues it later. */
function onFlushError(error: unknown, deliveryIds: readonly string[]): void {
  new Logger(WebhookOutbox.name).warn(`queueing ${deliveryIds.length} webhook deliveries failed, the sweep will: ${String(error)}`);
}
