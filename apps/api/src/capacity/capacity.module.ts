import { Global, Module } from '@nestjs/common';
import { AdmissionMetrics } from '../metrics/admissions.metrics.js';
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
  providers: [AdmissionMetrics, CapacityService, PolicySync, ReconcileQueue],
  exports: [AdmissionMetrics, ReconcileQueue],
})
export class CapacityModule {}
