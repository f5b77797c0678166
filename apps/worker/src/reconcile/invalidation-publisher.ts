import { INVALIDATION_CHANNEL, type Invalidation } from '@tally/contracts';
import type { Redis } from 'ioredis';

/** Tells every API replica what its in-process caches must drop (the API's CacheInvalidation listens). */
export class InvalidationPublisher {
  constructor(private readonly redis: Redis) {}

  async publish(change: Invalidation): Promise<void> {
    await this.redis.publish(INVALIDATION_CHANNEL, JSON.stringify(change));
  }
}
