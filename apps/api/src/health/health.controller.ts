import { Controller, Get, Res } from '@nestjs/common';
import { Health } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import { Public } from '../routes/access.js';
import { HealthService } from './health.service.js';
import { ApiRoute } from '../routes/api-route.js';

@Controller('healthz')
@Public()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** 200 when Postgres, Redis and LiveKit all answer; 503 naming the one that does not. */
  @ApiRoute({ summary: 'Postgres, Redis and LiveKit reachability', responses: { 200: Health, 503: Health } })
  @Get()
  async check(@Res({ passthrough: true }) reply: FastifyReply): Promise<Health> {
    const health = await this.health.check();
    void reply.status(health.status === 'ok' ? 200 : 503);
    return health;
  }
}
