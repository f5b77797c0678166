import { Controller, Get, Header, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public } from '../routes/access.js';
import { MetricsAccessGuard } from './metrics-access.js';
import { MetricsRegistry } from './metrics.registry.js';
import { ErrorBody } from '@tally/contracts';
import { ApiRoute } from '../routes/api-route.js';

@Controller('metrics')
@Public()
@UseGuards(MetricsAccessGuard)
export class MetricsController {
  constructor(private readonly metrics: MetricsRegistry) {}

  /** Prometheus text format; gauges are computed from Postgres, Redis and BullMQ during the scrape. */
  @ApiRoute({
    summary: 'Prometheus metrics (text format): Bearer TALLY_METRICS_TOKEN, or loopback clients when no token is set',
    responses: { 200: null, 401: ErrorBody, 403: ErrorBody },
  })
  @Get()
  @Header('cache-control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const { contentType, body } = await this.metrics.render();
    void reply.type(contentType);
    return body;
  }
}
