import { Module } from '@nestjs/common';
import { MetricsRegistry } from './metrics.registry.js';
import { MetricsRepository } from './metrics.repository.js';

/**
 * This API's one prom-client registry and the reads its gauges share. Each feature module imports it
 * and provides the collectors of what it measures (rate-limit, cameras, capacity, metering), so
 * `GET /metrics` (MetricsModule) needs none of them.
 */
@Module({ providers: [MetricsRegistry, MetricsRepository], exports: [MetricsRegistry, MetricsRepository] })
export class MetricsRegistryModule {}
