import { type DynamicModule, Module } from '@nestjs/common';
import { Admitter, CapacityLedger, loadCapacityModel } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { NodeRegistry, NodeWorkers, schedulableBudgets, toNodeBudget } from '@tally/nodes';
import { Redis } from 'ioredis';
import { WebhookOutbox } from '@tally/webhooks';
import { Clock } from './clock.js';
import { IngressesWorkerModule } from './ingresses/ingresses.module.js';
import { MaintenanceRunner } from './jobs/maintenance.runner.js';
import { RecordingsWorkerModule } from './recordings/recordings.module.js';
import { ReconcileRepository } from './reconcile/reconcile.repository.js';
import { AppFiles } from './reconcile/app-files.js';
import { AppTeardownRepository } from './reconcile/app-teardown.repository.js';
import { AppTeardown } from './reconcile/app-teardown.service.js';
import { CamerasReconciler } from './reconcile/cameras-reconciler.service.js';
import { MediaStopper } from './reconcile/media-stopper.js';
import { ReservationOwnersRepository } from './reconcile/reservation-owners.repository.js';
import { ReservationAuditor } from './reconcile/reservation-auditor.service.js';
import { StreamsReconciler } from './reconcile/streams-reconciler.service.js';
import { webhooksProviders } from './webhooks/webhooks.providers.js';

const REDIS = Symbol('redis');

@Module({})
export class WorkerModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: WorkerModule,
      // Global, so the feature modules it imports share its adapters.
      global: true,
      imports: [RecordingsWorkerModule, IngressesWorkerModule],
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: PrismaService, useFactory: () => new PrismaService(config.databaseUrl) },
        { provide: REDIS, useFactory: () => new Redis(config.redisUrl, { maxRetriesPerRequest: 3 }) },
        { provide: CapacityLedger, useFactory: (redis: Redis) => new CapacityLedger(redis), inject: [REDIS] },
        { provide: NodeRegistry, useFactory: (redis: Redis) => new NodeRegistry(redis), inject: [REDIS] },
        { provide: NodeWorkers, useFactory: (redis: Redis) => new NodeWorkers(redis), inject: [REDIS] },
        {
          provide: Admitter,
          useFactory: (ledger: CapacityLedger, registry: NodeRegistry, repository: ReconcileRepository) =>
            new Admitter(
              ledger,
              {
                liveNodes: async () => (await registry.list()).map(toNodeBudget),
                schedulableNodes: async () => schedulableBudgets(await registry.list()),
                appPolicies: () => repository.appPolicies(),
              },
              loadCapacityModel(config.capacityProfilePath),
            ),
          inject: [CapacityLedger, NodeRegistry, ReconcileRepository],
        },
        { provide: LivekitRoomClient, useFactory: () => new LivekitRoomClient(config.livekit) },
        Clock,
        ReconcileRepository,
        StreamsReconciler,
        CamerasReconciler,
        AppTeardownRepository,
        AppFiles,
        MediaStopper,
        AppTeardown,
        ReservationOwnersRepository,
        ReservationAuditor,
        MaintenanceRunner,
        ...webhooksProviders(config),
      ],
      exports: [CONFIG, PrismaService, CapacityLedger, Admitter, NodeRegistry, NodeWorkers, Clock, WebhookOutbox],
    };
  }
}
