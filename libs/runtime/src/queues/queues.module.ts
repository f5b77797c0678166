import { type DynamicModule, Global, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BullModule } from '@nestjs/bullmq';
import { CONFIG, type Config, redisConnectionOptions } from '@tally/config';
import type { QueueName } from '@tally/contracts';
import type { QueueOptions } from 'bullmq';
import { JobWorkers } from './job-workers.js';

export type QueuesOptions = Readonly<{
  /** Fixed-name queues this process produces to or consumes (`@InjectQueue(name)`). */
  queues: readonly QueueName[];
  /** Runs the `@Processor`s and `@HandlesJob`s, after checking there is one handler per job (the worker). */
  consume?: boolean;
}>;

/** Every BullMQ connection of a Nest process; blocking commands need `maxRetriesPerRequest: null`. */
export function bullConnection(config: Config): QueueOptions['connection'] {
  return redisConnectionOptions(config.redis, { maxRetriesPerRequest: null });
}

/**
 * BullMQ through `@nestjs/bullmq`, configured once from the runtime config. Queue names come from
 * the registry (libs/contracts/src/jobs.ts). Workers never start on their own
 * (`manualRegistration`): in the worker, `JobWorkers` starts them after its handler check.
 */
@Global()
@Module({})
export class QueuesModule {
  static forRoot(options: QueuesOptions): DynamicModule {
    const registered = BullModule.registerQueue(...options.queues.map((name) => ({ name })));
    const providers: Provider[] = options.consume === true ? [JobWorkers] : [];
    return {
      global: true,
      module: QueuesModule,
      imports: [
        DiscoveryModule,
        BullModule.forRootAsync({
          inject: [CONFIG],
          useFactory: (config: Config) => ({ connection: bullConnection(config) }),
          extraOptions: { manualRegistration: true },
        }),
        registered,
      ],
      providers,
      exports: [registered],
    };
  }
}
