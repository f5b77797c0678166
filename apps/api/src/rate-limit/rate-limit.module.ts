import { Module } from '@nestjs/common';
import { MetricsRegistryModule } from '../metrics/metrics-registry.module.js';
import { RateLimitCollector } from './rate-limit.collector.js';
import { RateLimitMetrics } from './rate-limit.metrics.js';
import { AppRateLimits } from './app-rates.js';
import { AuthFailureLimiter } from './auth-failures.js';
import { ApiRateLimiter } from './rate-limiter.js';

/** Per-app request rates and failed authentications per client; the bootstrap registers ApiRateLimiter's hook on the Fastify instance. */
@Module({
  imports: [MetricsRegistryModule],
  providers: [AppRateLimits, ApiRateLimiter, AuthFailureLimiter, RateLimitMetrics, RateLimitCollector],
  exports: [ApiRateLimiter, AuthFailureLimiter, RateLimitMetrics],
})
export class RateLimitModule {}
