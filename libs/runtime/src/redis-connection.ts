import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config, redisConnectionOptions } from '@tally/config';
import { Redis } from 'ioredis';

/**
 * The process's shared Redis connection (ledger, node registry, counters). Closed on
 * onApplicationShutdown: after the HTTP server has finished its requests and the queue workers
 * their jobs (both stop in the earlier shutdown phases), never under them.
 */
@Injectable()
export class RedisConnection extends Redis implements OnApplicationShutdown {
  constructor(@Inject(CONFIG) config: Config) {
    const { url, ...options } = redisConnectionOptions(config.redis, { maxRetriesPerRequest: 3, lazyConnect: false });
    if (url === undefined) super(options);
    else super(url, options);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.quit().catch(() => this.disconnect());
  }
}
