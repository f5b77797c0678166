import { Module } from '@nestjs/common';
import { AppsCollector } from './apps.collector.js';
import { DeliveriesCollector } from './deliveries.collector.js';
import { DiskCollector } from './disk.collector.js';
import { HlsCollector } from './hls.collector.js';
import { HttpMetrics } from './http.metrics.js';
import { MetricsAccessGuard } from './metrics-access.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsRegistryModule } from './metrics-registry.module.js';
import { MetricsStore } from './metrics.store.js';
import { PoolCollector } from './pool.collector.js';
import { ReconcilerCollector } from './reconciler.collector.js';
import { RecordingsCollector } from './recordings.collector.js';
import { RedisFailoversCollector } from './redis-failovers.collector.js';

/**
 * GET /metrics (docs/observability.md): the registry's text exposition, the HTTP latency histogram and
 * the gauges read from shared state. What a feature counts in process (admissions, camera frames,
 * rate-limit refusals, usage) is collected by that feature's module into the same registry.
 */
@Module({
  imports: [MetricsRegistryModule],
  controllers: [MetricsController],
  providers: [
    MetricsStore,
    MetricsAccessGuard,
    AppsCollector,
    PoolCollector,
    DiskCollector,
    DeliveriesCollector,
    RecordingsCollector,
    ReconcilerCollector,
    RedisFailoversCollector,
    HlsCollector,
    HttpMetrics,
  ],
})
export class MetricsModule {}
