import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';
import { MetricsRepository } from './metrics.repository.js';

const OPEN_HLS = ['starting', 'live'] as const;
const ENDED_HLS = ['stopped', 'failed'] as const;

/** Live HLS sessions from Postgres: open ones per app by status, and every session that ended, by outcome. */
@Injectable()
export class HlsCollector {
  constructor(repository: MetricsRepository, metrics: MetricsRegistry) {
    const registers = [metrics.registry];
    new Gauge({
      name: METRICS.appHlsSessions,
      help: 'Open live HLS sessions per app by status (starting: egress launched; live)',
      labelNames: ['app', 'status'] as const,
      registers,
      async collect() {
        const [appIds, rows] = await Promise.all([repository.appIds(), repository.openHlsSessions()]);
        this.reset();
        for (const app of appIds) for (const status of OPEN_HLS) this.set({ app, status }, 0);
        for (const r of rows) this.set({ app: r.appId, status: r.status }, r.count);
      },
    });
    new Counter({
      name: METRICS.hlsSessionsEnded,
      help: 'Live HLS sessions that ended, by outcome (stopped, failed); counted from the HLS sessions table',
      labelNames: ['outcome'] as const,
      registers,
      async collect() {
        const rows = await repository.endedHlsSessions();
        this.reset();
        for (const outcome of ENDED_HLS) this.inc({ outcome }, 0);
        for (const r of rows) this.inc({ outcome: r.status }, r.count);
      },
    });
  }
}
