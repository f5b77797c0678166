import { Global, Module } from '@nestjs/common';
import { Admitter, CapacityLedger, loadCapacityModel } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
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
      useFactory: (ledger: CapacityLedger, pool: PoolSourceAdapter, config: Config, admissions: AdmissionMetrics) =>
        new Admitter(ledger, pool, loadCapacityModel(config.capacityProfilePath), {
          onDecision: (kind, result) => admissions.observe(kind, result),
        }),
      inject: [CapacityLedger, PoolSourceAdapter, CONFIG, AdmissionMetrics],
    },
    CapacityService,
    PolicySync,
    ReconcileQueue,
  ],
  exports: [Admitter, AdmissionMetrics, ReconcileQueue],
})
export class CapacityModule {}
