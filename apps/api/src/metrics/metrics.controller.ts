import { Controller, Get, Header, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/principal.js';
import { MetricsAccessGuard } from './metrics-access.js';
import { MetricsRegistry } from './metrics.registry.js';

@Controller('metrics')
@Public()
@UseGuards(MetricsAccessGuard)
export class MetricsController {
  constructor(private readonly metrics: MetricsRegistry) {}

  /** Prometheus text format; gauges are computed from Postgres, Redis and BullMQ during the scrape. */
  @Get()
  @Header('cache-control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const { contentType, body } = await this.metrics.render();
    void reply.type(contentType);
    return body;
  }
}
