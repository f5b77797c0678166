import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { METRICS } from '../metrics/metric-names.js';

/**
 * Counts requests the rate limiter refused, by budget. Provided by the rate-limit module (the
 * limiter feeds it); RateLimitCollector adds it to the registry.
 */
@Injectable()
export class RateLimitMetrics {
  readonly counter = new Counter({
    name: METRICS.rateLimited,
    help: 'Requests refused 429 rate_limited, by budget (app.requests, app.starts, admin.requests, client.auth_failures)',
    labelNames: ['resource'] as const,
    registers: [],
  });

  refused(resource: string): void {
    this.counter.inc({ resource });
  }
}
