import { type DynamicModule, Module } from '@nestjs/common';
import type { Config } from '@tally/config';
import { STATIC_QUEUES } from '@tally/contracts';
import { AdmissionModule, QueuesModule, RuntimeModule } from '@tally/runtime';
import { STREAM_LIFECYCLES, STREAM_PROVIDERS } from '@tally/streams';
import { DiskProcessor } from './disk/disk.processor.js';
import { DiskStats } from './disk/disk-stats.js';
import { DiskWatermarkCheck } from './disk/disk-watermark.service.js';
import { DiskWritersRepository } from './disk/disk-writers.repository.js';
import { IngressesWorkerModule } from './ingresses/ingresses.module.js';
import { MaintenanceProcessor } from './jobs/maintenance.processor.js';
import { MeteringWorkerModule } from './metering/metering.module.js';
import { NodeReportQueues } from './node-reports/node-report-queues.js';
import { NodeReportsProcessor } from './node-reports/node-reports.processor.js';
import { Sweep } from './jobs/sweep.service.js';
import { RecordingsWorkerModule } from './recordings/recordings.module.js';
import { ReconcileRepository } from './reconcile/reconcile.repository.js';
import { AppFiles } from './reconcile/app-files.js';
import { AppTeardownRepository } from './reconcile/app-teardown.repository.js';
import { AppTeardown } from './reconcile/app-teardown.service.js';
import { CamerasReconciler } from './reconcile/cameras-reconciler.service.js';
import { MediaStopper } from './reconcile/media-stopper.js';
import { ReservationOwnersRepository } from './reconcile/reservation-owners.repository.js';
import { RedisLossDetector } from './reconcile/redis-loss.js';
import { ReservationAuditor } from './reconcile/reservation-auditor.service.js';
import { NodeAbsence } from './reconcile/node-absence.js';
import { StreamsReconciler } from './reconcile/streams-reconciler.service.js';
import { webhooksProviders } from './webhooks/webhooks.providers.js';

@Module({})
export class WorkerModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: WorkerModule,
      // Global, so the feature modules it imports share its adapters.
      global: true,
      imports: [
        RuntimeModule.forRoot(config),
        QueuesModule.forRoot({ queues: STATIC_QUEUES, consume: true }),
        AdmissionModule,
        RecordingsWorkerModule,
        IngressesWorkerModule,
        MeteringWorkerModule,
      ],
      providers: [
        ...STREAM_PROVIDERS,
        ReconcileRepository,
        StreamsReconciler,
        CamerasReconciler,
        AppTeardownRepository,
        AppFiles,
        MediaStopper,
        AppTeardown,
        ReservationOwnersRepository,
        ReservationAuditor,
        RedisLossDetector,
        NodeAbsence,
        Sweep,
        MaintenanceProcessor,
        NodeReportQueues,
        NodeReportsProcessor,
        DiskStats,
        DiskWritersRepository,
        DiskWatermarkCheck,
        DiskProcessor,
        ...webhooksProviders(config),
      ],
      // NodeAbsence: the sweeps of the feature modules judge the pool the same way.
      exports: [...STREAM_LIFECYCLES, NodeAbsence],
    };
  }
}
