import { Injectable } from '@nestjs/common';
import { MetricsRegistry } from '../metrics/metrics.registry.js';
import { RateLimitMetrics } from './rate-limit.metrics.js';

/** Adds the rate limiter's refusal counter to this API's registry. */
@Injectable()
export class RateLimitCollector {
  constructor(rateLimits: RateLimitMetrics, metrics: MetricsRegistry) {
    metrics.registry.registerMetric(rateLimits.counter);
  }
}
