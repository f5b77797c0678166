import { type DynamicModule, Global, Inject, Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitRoomClient, LivekitWebhookVerifier } from '@tally/livekit';
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
      ],
      exports: [CONFIG, PrismaService, RedisConnection, LivekitRoomClient, LivekitWebhookVerifier, Clock],
    };
  }
}
