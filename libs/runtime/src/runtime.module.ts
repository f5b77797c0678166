import { type DynamicModule, Global, Logger, Module, type Provider } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitEgressClient, LivekitRoomClient } from '@tally/livekit';
import { NodeRegistry, NodeWorkers } from '@tally/nodes';
import { DeliveryWake, WebhookOutbox } from '@tally/webhooks';
import { LoggerModule } from 'nestjs-pino';
import { CacheInvalidation } from './cache-invalidation.js';
import { Clock } from './clock.js';
import { EgressStopRequests } from './egress-stop-requests.js';
import { loggerModule } from './logging.js';
import { RedisConnection } from './redis-connection.js';

/**
 * What every Tally Nest process (the API and the worker) runs on, wired in one place: the frozen
 * config, Prisma, the shared Redis connection, the invalidation bus of the in-process caches, the capacity ledger, the node registry and the
 * nodes' worker reports, LiveKit's room and egress services (every egress stop noted), the clock
 * the app webhooks' outbox and the wake-up it sends after commit, and JSON logging (nestjs-pino). Connections close in onApplicationShutdown, after the HTTP server
 * and the queue workers have stopped.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(config: Config): DynamicModule {
    const providers: Provider[] = [
      { provide: CONFIG, useValue: config },
      { provide: PrismaService, useFactory: () => new PrismaService(config.databaseUrl) },
      RedisConnection,
      CacheInvalidation,
      { provide: CapacityLedger, useFactory: (redis: RedisConnection) => new CapacityLedger(redis), inject: [RedisConnection] },
      { provide: NodeRegistry, useFactory: (redis: RedisConnection) => new NodeRegistry(redis), inject: [RedisConnection] },
      { provide: NodeWorkers, useFactory: (redis: RedisConnection) => new NodeWorkers(redis), inject: [RedisConnection] },
      { provide: LivekitRoomClient, useFactory: () => new LivekitRoomClient(config.livekit) },
      Clock,
      EgressStopRequests,
      { provide: DeliveryWake, useFactory: () => new DeliveryWake(config.redis) },
      { provide: WebhookOutbox, useFactory: (wake: DeliveryWake) => new WebhookOutbox(wake, { onFlushError }), inject: [DeliveryWake] },
      // One egress adapter per process, noting every stop it asks (the worker's reconciler reads the notes).
      {
        provide: LivekitEgressClient,
        useFactory: (stops: EgressStopRequests) => new LivekitEgressClient(config.livekit, stops),
        inject: [EgressStopRequests],
      },
    ];
    return {
      global: true,
      module: RuntimeModule,
      imports: [loggerModule(config)],
      providers,
      exports: [
        LoggerModule,
        CONFIG,
        PrismaService,
        RedisConnection,
        CacheInvalidation,
        CapacityLedger,
        NodeRegistry,
        NodeWorkers,
        LivekitRoomClient,
        LivekitEgressClient,
        EgressStopRequests,
        Clock,
        WebhookOutbox,
      ],
    };
  }
}

/** The wake after commit failed: the delivery rows are pending, so the worker's dispatcher finds them at its next poll. */
function onFlushError(error: unknown, deliveryIds: readonly string[]): void {
  new Logger(WebhookOutbox.name).warn(
    `waking the dispatchers for ${deliveryIds.length} webhook deliveries failed, their poll will find them: ${String(error)}`,
  );
}
