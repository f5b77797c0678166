import { Global, Module } from '@nestjs/common';
import { Admitter, CapacityLedger, loadCapacityModel } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { NodeRegistry, NodeWorkers } from '@tally/nodes';
import { RedisConnection } from '../infra/infra.module.js';
import { AdmissionMetrics } from '../metrics/admissions.metrics.js';
import { CapacityController } from './capacity.controller.js';
import { CapacityService } from './capacity.service.js';
import { PoolSourceAdapter } from './pool-source.js';
import { ReconcileQueue } from './reconcile.queue.js';

/** Admission for every workload kind, and the capacity and usage routes that explain it. */
@Global()
@Module({
  controllers: [CapacityController],
  providers: [
    { provide: NodeRegistry, useFactory: (redis: RedisConnection) => new NodeRegistry(redis), inject: [RedisConnection] },
    { provide: NodeWorkers, useFactory: (redis: RedisConnection) => new NodeWorkers(redis), inject: [RedisConnection] },
    { provide: CapacityLedger, useFactory: (redis: RedisConnection) => new CapacityLedger(redis), inject: [RedisConnection] },
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
    ReconcileQueue,
  ],
  exports: [Admitter, CapacityLedger, NodeRegistry, NodeWorkers, AdmissionMetrics, ReconcileQueue],
})
export class CapacityModule {}
