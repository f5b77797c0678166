import { type DynamicModule, Module } from '@nestjs/common';
import { SlotLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { Redis } from 'ioredis';
import { Clock } from './clock.js';
import { MaintenanceRunner } from './jobs/maintenance.runner.js';
import { ReconcileRepository } from './reconcile/reconcile.repository.js';
import { StreamsReconciler } from './reconcile/streams-reconciler.service.js';

const REDIS = Symbol('redis');

@Module({})
export class WorkerModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: WorkerModule,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: PrismaService, useFactory: () => new PrismaService(config.databaseUrl) },
        { provide: REDIS, useFactory: () => new Redis(config.redisUrl, { maxRetriesPerRequest: 3 }) },
        { provide: SlotLedger, useFactory: (redis: Redis) => new SlotLedger(redis), inject: [REDIS] },
        { provide: LivekitRoomClient, useFactory: () => new LivekitRoomClient(config.livekit) },
        Clock,
        ReconcileRepository,
        StreamsReconciler,
        MaintenanceRunner,
      ],
    };
  }
}
