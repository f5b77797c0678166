import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';
import { MetricsRepository } from './metrics.repository.js';
import { MetricsStore } from './metrics.store.js';

const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;

/** Outbound webhook deliveries (Postgres: the delivery rows are the queue) and the BullMQ queues. */
@Injectable()
export class DeliveriesCollector {
  constructor(repository: MetricsRepository, store: MetricsStore, metrics: MetricsRegistry) {
    const registers = [metrics.registry];
    new Gauge({
      name: METRICS.webhookDeliveries,
      help: 'Webhook deliveries in the delivery log per app and status (pending, delivered, dead)',
      labelNames: ['app', 'status'] as const,
      registers,
      async collect() {
        const rows = await repository.deliveries();
        this.reset();
        for (const app of new Set(rows.map((r) => r.appId))) for (const status of DELIVERY_STATUSES) this.set({ app, status }, 0);
        for (const r of rows) this.set({ app: r.appId, status: r.status }, r.count);
      },
    });
    // Summed over apps: bounded series however many apps there are.
    new Gauge({
      name: METRICS.webhookAppsQueued,
      help: 'Apps with pending webhook deliveries (waiting, delayed or in flight)',
      registers,
      async collect() {
        this.set((await store.webhookBacklog()).apps);
      },
    });
    new Gauge({
      name: METRICS.webhookAppBacklogMax,
      help: "The largest one app's webhook backlog (pending deliveries waiting or delayed, not in flight)",
      registers,
      async collect() {
        this.set((await store.webhookBacklog()).largestAppBacklog);
      },
    });
    new Gauge({
      name: METRICS.queueJobs,
      help: 'Jobs per BullMQ queue and state (tally-webhooks: pending webhook deliveries in PostgreSQL, every app summed)',
      labelNames: ['queue', 'state'] as const,
      registers,
      async collect() {
        const rows = await store.queueDepths();
        this.reset();
        for (const r of rows) this.set({ queue: r.queue, state: r.state }, r.count);
      },
    });
  }
}
