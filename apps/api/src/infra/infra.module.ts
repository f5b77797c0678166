import { type DynamicModule, Global, Logger, Module } from '@nestjs/common';
import type { Config } from '@tally/config';
import { LivekitWebhookVerifier } from '@tally/livekit';
import { STATIC_QUEUES } from '@tally/contracts';
import { QueuesModule, RuntimeModule } from '@tally/runtime';
import { STREAM_LIFECYCLES, STREAM_PROVIDERS } from '@tally/streams';
import { AddressPolicy, DeliveryWake, WebhookOutbox } from '@tally/webhooks';

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
        // The API only produces.
        QueuesModule.forRoot({ queues: STATIC_QUEUES }),
      ],
      providers: [
        { provide: LivekitWebhookVerifier, useFactory: () => new LivekitWebhookVerifier(config.livekit) },
        { provide: AddressPolicy, useFactory: () => new AddressPolicy(config.webhooks.allowCidrs) },
        // The lifecycles of streams, ingresses, live HLS and cameras, shared with the worker.
        ...STREAM_PROVIDERS,
        { provide: DeliveryWake, useFactory: () => new DeliveryWake(config.redisUrl) },
        {
          provide: WebhookOutbox,
          useFactory: (wake: DeliveryWake) => new WebhookOutbox(wake, { onFlushError }),
          inject: [DeliveryWake],
        },
      ],
      exports: [LivekitWebhookVerifier, WebhookOutbox, AddressPolicy, ...STREAM_LIFECYCLES],
    };
  }
}

/** The wake after commit failed: the delivery rows are pending, so the worker's dispatcher finds them at its next poll. */
function onFlushError(error: unknown, deliveryIds: readonly string[]): void {
  new Logger(WebhookOutbox.name).warn(
    `waking the dispatchers for ${deliveryIds.length} webhook deliveries failed, their poll will find them: ${String(error)}`,
  );
}
