import { type DynamicModule, Global, Inject, Injectable, Logger, Module, type OnModuleDestroy } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitRoomClient, LivekitWebhookVerifier } from '@tally/livekit';
import { AddressPolicy, DeliveryQueue, WebhookOutbox } from '@tally/webhooks';
import { Redis } from 'ioredis';
import { Clock } from '../common/clock.js';

/** The shared Redis connection; closed with the application. */
@Injectable()
export class RedisConnection extends Redis implements OnModuleDestroy {
  constructor(@Inject(CONFIG) config: Config) {
    super(config.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false });
  }

  async onModuleDestroy(): Promise<void> {
    await this.quit().catch(() => this.disconnect());
  }
}

/** Adapters in front of every side effect, built once from the frozen config. */
@Global()
@Module({})
export class InfraModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: InfraModule,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: PrismaService, useFactory: () => new PrismaService(config.databaseUrl) },
        RedisConnection,
        { provide: LivekitRoomClient, useFactory: () => new LivekitRoomClient(config.livekit) },
        { provide: LivekitWebhookVerifier, useFactory: () => new LivekitWebhookVerifier(config.livekit) },
        Clock,
        { provide: AddressPolicy, useFactory: () => new AddressPolicy(config.webhooks.allowCidrs) },
        { provide: DeliveryQueue, useFactory: () => new DeliveryQueue(config.redisUrl) },
        {
          provide: WebhookOutbox,
          useFactory: (queue: DeliveryQueue) => new WebhookOutbox(queue, { onFlushError }),
          inject: [DeliveryQueue],
        },
      ],
      exports: [CONFIG, PrismaService, RedisConnection, LivekitRoomClient, LivekitWebhookVerifier, Clock, WebhookOutbox, AddressPolicy],
    };
  }
}

/** Queueing after commit failed: the delivery row is pending, so the worker's outbox sweep queues it later. */
function onFlushError(error: unknown, deliveryIds: readonly string[]): void {
  new Logger(WebhookOutbox.name).warn(`queueing ${deliveryIds.length} webhook deliveries failed, the sweep will: ${String(error)}`);
}
