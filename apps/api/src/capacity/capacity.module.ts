import { Global, Module } from '@nestjs/common';
import { MetricsRegistryModule } from '../metrics/metrics-registry.module.js';
import { AdmissionsCollector } from './admissions.collector.js';
import { AdmissionMetrics } from './admissions.metrics.js';
import { CapacityController } from './capacity.controller.js';
import { CapacityService } from './capacity.service.js';
import { PolicySync } from './policy-sync.js';
import { ReconcileQueue } from './reconcile.queue.js';

/**
 * The capacity and usage routes that explain admission (the Admitter itself comes from the
 * runtime's AdmissionModule), and the count of its decisions.
 */
@Global()
@Module({
  controllers: [CapacityController],
  imports: [MetricsRegistryModule],
  providers: [AdmissionMetrics, AdmissionsCollector, CapacityService, PolicySync, ReconcileQueue],
  exports: [ReconcileQueue],
})
export class CapacityModule {}
