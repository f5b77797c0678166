import { Module } from '@nestjs/common';
import { RateLimitMetrics } from '../metrics/rate-limit.metrics.js';
import { AppRateLimits } from './app-rates.js';
import { AuthFailureLimiter } from './auth-failures.js';
import { ApiRateLimiter } from './rate-limiter.js';

/** Per-app request rates and failed authentications per client; the bootstrap registers ApiRateLimiter's hook on the Fastify instance. */
@Module({
  providers: [AppRateLimits, ApiRateLimiter, AuthFailureLimiter, RateLimitMetrics],
  exports: [ApiRateLimiter, AuthFailureLimiter, RateLimitMetrics],
})
export class RateLimitModule {}
