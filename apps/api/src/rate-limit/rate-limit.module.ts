import { Module } from '@nestjs/common';
import { AppRateLimits } from './app-rates.js';
import { ApiRateLimiter } from './rate-limiter.js';

/** Per-app request rates; the bootstrap registers ApiRateLimiter's hook on the Fastify instance. */
@Module({ providers: [AppRateLimits, ApiRateLimiter], exports: [ApiRateLimiter] })
export class RateLimitModule {}
