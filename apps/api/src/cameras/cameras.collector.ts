import { Injectable } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { Gauge } from 'prom-client';
import { CameraPresence } from './camera-presence.js';
import { CameraFrameMetrics } from './camera-frames.metrics.js';
import { METRICS } from '../metrics/metric-names.js';
import { MetricsRegistry } from '../metrics/metrics.registry.js';
import { MetricsRepository } from '../metrics/metrics.repository.js';

/**
 * Cameras per app, read from state every API replica shares: rows in Postgres, connections from the
 * cameras' presence keys in Redis, viewers from their reservations in the capacity ledger. The
 * frame counter is this process's own.
 */
@Injectable()
export class CamerasCollector {
  constructor(
    repository: MetricsRepository,
    presence: CameraPresence,
    ledger: CapacityLedger,
    frames: CameraFrameMetrics,
    metrics: MetricsRegistry,
  ) {
    const registers = [metrics.registry];
    metrics.registry.registerMetric(frames.counter);
    const cameras = metrics.perScrape(async () => {
      const [appIds, rows] = await Promise.all([repository.appIds(), repository.cameras()]);
      const seen = await presence.lastFrames(rows.map((r) => r.id));
      const perApp = new Map(appIds.map((id) => [id, { configured: 0, connected: 0 }]));
      for (const r of rows) {
        const app = perApp.get(r.appId) ?? { configured: 0, connected: 0 };
        app.configured += 1;
        if (seen.has(r.id)) app.connected += 1;
        perApp.set(r.appId, app);
      }
      return perApp;
    });

    new Gauge({
      name: METRICS.appCameras,
      help: 'Cameras configured per app (created and not deleted), connected or not',
      labelNames: ['app'] as const,
      registers,
      async collect() {
        const perApp = await cameras();
        this.reset();
        for (const [app, n] of perApp) this.set({ app }, n.configured);
      },
    });
    new Gauge({
      name: METRICS.appCamerasConnected,
      help: 'Cameras per app connected to any API process and sending frames (their presence key in Redis)',
      labelNames: ['app'] as const,
      registers,
      async collect() {
        const perApp = await cameras();
        this.reset();
        for (const [app, n] of perApp) this.set({ app }, n.connected);
      },
    });
    new Gauge({
      name: METRICS.appCameraViewers,
      help: 'Live camera viewers per app (MJPEG and WebSocket), as admitted in the capacity ledger across every API process',
      labelNames: ['app'] as const,
      registers,
      async collect() {
        const [perApp, held] = await Promise.all([cameras(), ledger.list()]);
        this.reset();
        for (const app of perApp.keys()) this.set({ app }, 0);
        for (const r of held) if (r.kind === 'camera.viewer') this.inc({ app: r.appId }, r.count);
      },
    });
  }
}
