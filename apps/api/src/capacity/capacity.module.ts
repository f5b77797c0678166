import { Global, Module } from '@nestjs/common';
import { Admitter, CapacityLedger, loadCapacityModel, PolicyCache } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { CacheInvalidation } from '@tally/runtime';
import { AdmissionMetrics } from '../metrics/admissions.metrics.js';
import { CapacityController } from './capacity.controller.js';
import { CapacityService } from './capacity.service.js';
import { PolicySync } from './policy-sync.js';
import { PoolSourceAdapter } from './pool-source.js';
import { ReconcileQueue } from './reconcile.queue.js';

/** Admission for every workload kind (on the runtime's ledger and node registry), and the capacity and usage routes that explain it. */
@Global()
@Module({
  controllers: [CapacityController],
  providers: [
    PoolSourceAdapter,
    AdmissionMetrics,
    {
      provide: Admitter,
      useFactory: (
        ledger: CapacityLedger,
        pool: PoolSourceAdapter,
        config: Config,
        admissions: AdmissionMetrics,
        invalidation: CacheInvalidation,
      ) => {
        // Every replica forgets an app's policy when it changes (AppsService publishes it) or the app is deleted.
        const policies = new PolicyCache(() => invalidation.live);
        invalidation.onChange((change) => {
          if (change.kind === 'all') policies.forgetAll();
          else if (change.kind === 'policy' || change.kind === 'app') policies.forget(change.appId);
        });
        return new Admitter(
          ledger,
          pool,
          loadCapacityModel(config.capacityProfilePath, { diskHorizonS: config.diskHorizonS, diskWatermarks: config.disk.watermarks }),
          {
            onDecision: (kind, result) => admissions.observe(kind, result),
            policies,
          },
        );
      },
      inject: [CapacityLedger, PoolSourceAdapter, CONFIG, AdmissionMetrics, CacheInvalidation],
    },
    CapacityService,
    PolicySync,
    ReconcileQueue,
  ],
  exports: [Admitter, AdmissionMetrics, ReconcileQueue, PoolSourceAdapter],
})
export class CapacityModule {}
