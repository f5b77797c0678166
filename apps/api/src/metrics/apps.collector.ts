import { Injectable } from '@nestjs/common';
import { EGRESS_MODES } from '@tally/capacity';
import { Admitter } from '@tally/admission';
import { Gauge } from 'prom-client';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';
import { MetricsRepository } from './metrics.repository.js';

const RECORDING_MODES = EGRESS_MODES;
const OPEN_RECORDING = ['starting', 'active', 'ending'] as const;
const OPEN_STREAM = ['created', 'live'] as const;

/** Per app: effective limits and what is held against them (the Admitter's view), open streams and recordings. */
@Injectable()
export class AppsCollector {
  constructor(admitter: Admitter, repository: MetricsRepository, metrics: MetricsRegistry) {
    const quotas = metrics.perScrape(async () => {
      const limits = await admitter.limitsForAll();
      const appIds = Object.keys(limits);
      const usage = await Promise.all(appIds.map(async (appId) => [appId, await admitter.appUsage(appId)] as const));
      return { limits, usage: Object.fromEntries(usage), appIds };
    });
    const streams = metrics.perScrape(() => repository.openStreams());
    const recordings = metrics.perScrape(() => repository.openRecordings());
    const registers = [metrics.registry];

    new Gauge({
      name: METRICS.appQuotaLimit,
      help: "An app's effective limit (cap) per quota class: explicit, or the default cap sized on one node",
      labelNames: ['app', 'quota'] as const,
      registers,
      async collect() {
        const { limits } = await quotas();
        this.reset();
        for (const [app, appLimits] of Object.entries(limits)) {
          for (const [quota, limit] of Object.entries(appLimits)) this.set({ app, quota }, limit);
        }
      },
    });
    new Gauge({
      name: METRICS.appQuotaUsed,
      help: 'Units an app holds per quota class (reservations in the capacity ledger)',
      labelNames: ['app', 'quota'] as const,
      registers,
      async collect() {
        const { limits, usage } = await quotas();
        this.reset();
        for (const [app, appLimits] of Object.entries(limits)) {
          for (const quota of Object.keys(appLimits)) this.set({ app, quota }, usage[app]?.[quota] ?? 0);
        }
      },
    });
    new Gauge({
      name: METRICS.appStreams,
      help: 'Open streams per app by status (created: waiting for a participant; live)',
      labelNames: ['app', 'status'] as const,
      registers,
      async collect() {
        const [{ appIds }, rows] = await Promise.all([quotas(), streams()]);
        this.reset();
        for (const app of appIds) for (const status of OPEN_STREAM) this.set({ app, status }, 0);
        for (const r of rows) this.set({ app: r.appId, status: r.status }, r.count);
      },
    });
    new Gauge({
      name: METRICS.appRecordings,
      help: 'Open recordings per app by egress mode and status (starting, active, ending)',
      labelNames: ['app', 'mode', 'status'] as const,
      registers,
      async collect() {
        const [{ appIds }, rows] = await Promise.all([quotas(), recordings()]);
        this.reset();
        for (const app of appIds) {
          for (const mode of RECORDING_MODES) for (const status of OPEN_RECORDING) this.set({ app, mode, status }, 0);
        }
        for (const r of rows) this.set({ app: r.appId, mode: r.mode, status: r.status }, r.count);
      },
    });
  }
}
