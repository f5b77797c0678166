import { Injectable } from '@nestjs/common';
import type { Admitted, Refused } from '@tally/admission';
import { AdmissionDecisions } from '@tally/runtime';
import type { WorkloadKind } from '@tally/capacity';
import { Counter } from 'prom-client';
import { METRICS } from '../metrics/metric-names.js';

/**
 * Counts every decision of Admitter.admit (AdmissionDecisions). Provided by the capacity module;
 * AdmissionsCollector adds the counter to the registry.
 */
@Injectable()
export class AdmissionMetrics {
  readonly counter = new Counter({
    name: METRICS.admissions,
    help: 'Admission decisions by workload kind, outcome (admitted/refused) and the resource that refused (none when admitted)',
    labelNames: ['kind', 'outcome', 'resource'] as const,
    registers: [],
  });

  constructor(decisions: AdmissionDecisions) {
    decisions.onDecision((kind, result) => this.observe(kind, result));
  }

  observe(kind: WorkloadKind, result: Admitted | Refused): void {
    if (result.ok) this.counter.inc({ kind, outcome: 'admitted', resource: 'none' });
    else this.counter.inc({ kind, outcome: 'refused', resource: result.refusal.resource });
  }
}
