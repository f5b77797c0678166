import { Injectable } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { Histogram } from 'prom-client';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';

/** Request latency by route pattern (`/v1/apps/:appId/streams`, never the raw URL, so labels stay bounded). */
@Injectable()
export class HttpMetrics {
  private readonly histogram: Histogram<'method' | 'route' | 'status'>;

  constructor(metrics: MetricsRegistry) {
    this.histogram = new Histogram({
      name: METRICS.httpRequestDuration,
      help: 'HTTP request duration by method, route pattern and status code',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metrics.registry],
    });
  }

  /** Registers the onResponse hook; call before the server is ready. */
  attach(fastify: FastifyInstance): void {
    fastify.addHook('onResponse', (request, reply, done) => {
      this.histogram.observe(
        { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
      done();
    });
  }
}
