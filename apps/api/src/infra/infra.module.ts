import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Config } from '@tally/config';
import { LivekitWebhookVerifier } from '@tally/livekit';
import { STATIC_QUEUES } from '@tally/contracts';
import { AdmissionModule, QueuesModule, RuntimeModule } from '@tally/runtime';
import { STREAM_LIFECYCLES, STREAM_PROVIDERS } from '@tally/streams';
import { AddressPolicy, WebhookResolver } from '@tally/webhooks';

export { RedisConnection } from '@tally/runtime';

/** The shared runtime (config, Prisma, Redis, ledger, registry, LiveKit, clock, outbox, queues, admission) plus the API's own adapters. */
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
        AdmissionModule,
      ],
      providers: [
        { provide: LivekitWebhookVerifier, useFactory: () => new LivekitWebhookVerifier(config.livekit) },
        { provide: AddressPolicy, useFactory: () => new AddressPolicy(config.webhooks.allowCidrs) },
        { provide: WebhookResolver, useFactory: () => new WebhookResolver() },
        // The lifecycles of streams, ingresses, live HLS and cameras, shared with the worker.
        ...STREAM_PROVIDERS,
      ],
      exports: [LivekitWebhookVerifier, AddressPolicy, WebhookResolver, ...STREAM_LIFECYCLES],
    };
  }
}
