import { Module } from '@nestjs/common';
import { AdmissionsCollector } from './admissions.collector.js';
import { CamerasModule } from '../cameras/cameras.module.js';
import { AppsCollector } from './apps.collector.js';
import { CamerasCollector } from './cameras.collector.js';
import { DeliveriesCollector } from './deliveries.collector.js';
import { DiskCollector } from './disk.collector.js';
import { HlsCollector } from './hls.collector.js';
import { HttpMetrics } from './http.metrics.js';
import { MetricsAccessGuard } from './metrics-access.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsRegistry } from './metrics.registry.js';
import { MetricsRepository } from './metrics.repository.js';
import { MetricsStore } from './metrics.store.js';
import { PoolCollector } from './pool.collector.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { RateLimitCollector } from './rate-limit.collector.js';
import { ReconcilerCollector } from './reconciler.collector.js';
import { RecordingsCollector } from './recordings.collector.js';
import { UsageCollector } from './usage.collector.js';
import { MeteringModule } from '../metering/metering.module.js';

/**
 * GET /metrics (docs/observability.md). The admission counter comes from the global capacity module,
 * the camera frame counter and presence from the cameras module, the rate limiter's refusals from its module.
 */
@Module({
  imports: [CamerasModule, RateLimitModule, MeteringModule],
  controllers: [MetricsController],
  providers: [
    MetricsRegistry,
    MetricsRepository,
    MetricsStore,
    MetricsAccessGuard,
    AppsCollector,
    PoolCollector,
    DiskCollector,
    AdmissionsCollector,
    DeliveriesCollector,
    RecordingsCollector,
    ReconcilerCollector,
    CamerasCollector,
    HlsCollector,
    UsageCollector,
    RateLimitCollector,
    HttpMetrics,
  ],
})
export class MetricsModule {}
