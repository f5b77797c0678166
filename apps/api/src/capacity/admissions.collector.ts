import { Injectable } from '@nestjs/common';
import { AdmissionMetrics } from './admissions.metrics.js';
import { MetricsRegistry } from '../metrics/metrics.registry.js';

/** Adds the admission counter (fed by the Admitter's observer) to this API's registry. */
@Injectable()
export class AdmissionsCollector {
  constructor(admissions: AdmissionMetrics, metrics: MetricsRegistry) {
    metrics.registry.registerMetric(admissions.counter);
  }
}
