import { Controller, Get, Res } from '@nestjs/common';
import type { Health } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/principal.js';
import { HealthService } from './health.service.js';

@Controller('healthz')
@Public()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** 200 when Postgres, Redis and LiveKit all answer; 503 naming the one that does not. */
  @Get()
  async check(@Res({ passthrough: true }) reply: FastifyReply): Promise<Health> {
    const health = await this.health.check();
    void reply.status(health.status === 'ok' ? 200 : 503);
    return health;
  }
}
