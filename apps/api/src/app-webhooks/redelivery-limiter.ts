import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LimitRefusedError } from '../common/domain-error.js';
import { RedisConnection } from '../infra/infra.module.js';

const WINDOW_S = 60;

/**
 * Redeliveries per app per minute (a fixed window in Redis, shared by every API replica), so an
 * app cannot flood its own lane, or the database, by redelivering its whole log in a loop.
 */
@Injectable()
export class RedeliveryLimiter {
  constructor(
    private readonly redis: RedisConnection,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Counts one redelivery of `appId`; over the limit, a 429 naming app.webhook_redeliveries. */
  async take(appId: string): Promise<void> {
    const key = `tally:webhook-redeliveries:${appId}:${Math.floor(Date.now() / 1000 / WINDOW_S)}`;
    const [[, count], [, ttl]] = (await this.redis.multi().incr(key).expire(key, WINDOW_S, 'NX').ttl(key).exec()) as [
      [null, number],
      [null, number],
      [null, number],
    ];
    const limit = this.config.webhooks.redeliverPerMinute;
    if (count <= limit) return;
    throw new LimitRefusedError('quota_exceeded', {
      resource: 'app.webhook_redeliveries',
      limit,
      used: limit,
      requested: 1,
      retryAfterS: Math.max(1, ttl),
    });
  }
}
