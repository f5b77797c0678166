import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';
import { MetricsStore } from './metrics.store.js';

/**
 * Kinds exported at 0 before they first happen, so an alert on their increase fires the first time
 * (a series that appears at 1 has no increase).
 */
const ALWAYS_EXPORTED = ['redis.dataLost'] as const;

/** The worker has no HTTP server: it adds its sweeps' repairs to a Redis hash, exported here. */
@Injectable()
export class ReconcilerCollector {
  constructor(store: MetricsStore, metrics: MetricsRegistry) {
    new Counter({
      name: METRICS.reconcilerRepairs,
      help: 'Repairs made by the reconciliation sweeps, by kind (e.g. streams.endedRoomGone, recordings.ghostEgressesStopped)',
      labelNames: ['kind'] as const,
      registers: [metrics.registry],
      async collect() {
        const totals = await store.repairs();
        this.reset();
        for (const kind of ALWAYS_EXPORTED) this.inc({ kind }, 0);
        for (const [kind, n] of Object.entries(totals)) if (Number.isFinite(n) && n >= 0) this.inc({ kind }, n);
      },
    });
  }
}
