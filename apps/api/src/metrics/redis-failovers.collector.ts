import { Injectable, Logger } from '@nestjs/common';
import { RedisConnection } from '@tally/runtime';
import { Counter } from 'prom-client';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';
import { PrimaryChanges } from './primary-changes.js';

/**
 * Counts the Redis failovers this API process followed: each time its connection is ready again on
 * another server than before (with Sentinel, the promoted replica; docs/adr/0040-redis-sentinel.md).
 * Exported at 0 from the start, so an alert on its increase fires on the first failover.
 */
@Injectable()
export class RedisFailoversCollector {
  private readonly logger = new Logger(RedisFailoversCollector.name);

  constructor(redis: RedisConnection, metrics: MetricsRegistry) {
    const counter = new Counter({
      name: METRICS.redisFailovers,
      help: 'Times this API process found its Redis primary on another server than before (a Sentinel failover it followed)',
      registers: [metrics.registry],
    });
    const changes = new PrimaryChanges();
    const observe = () => {
      const address = `${redis.stream.remoteAddress ?? '?'}:${redis.stream.remotePort ?? '?'}`;
      if (changes.seen(address)) {
        counter.inc();
        this.logger.warn(`Redis primary is now ${address}: followed a failover`);
      }
    };
    redis.on('ready', observe);
    if (redis.status === 'ready') observe();
  }
}
