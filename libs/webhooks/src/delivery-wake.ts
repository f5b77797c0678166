import { WEBHOOK_WAKE_CHANNEL } from '@tally/contracts';
import { createRedis, type RedisTarget } from '@tally/config';
import type { Redis } from 'ioredis';

/**
 * Wakes the workers' dispatchers after deliveries commit: one PUBLISH per app on
 * WEBHOOK_WAKE_CHANNEL. Only a hint: the delivery rows are the queue (the dispatchers claim them
 * from PostgreSQL and also poll for due ones), so a lost message delays a delivery by one poll at
 * most (docs/adr/0019-webhook-deliveries-claimed-from-postgres.md).
 */
export class DeliveryWake {
  private readonly redis: Redis;

  /** `redis` is a process's target, or a plain URL (tools and tests). */
  constructor(redis: RedisTarget | string) {
    const target = typeof redis === 'string' ? { url: redis, sentinel: undefined } : redis;
    this.redis = createRedis(target, { maxRetriesPerRequest: null });
  }

  /** Publishes each app once; one round trip for all of them. */
  async wake(appIds: Iterable<string>): Promise<void> {
    const apps = [...new Set(appIds)];
    if (apps.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const appId of apps) pipeline.publish(WEBHOOK_WAKE_CHANNEL, appId);
    const replies = (await pipeline.exec()) ?? [];
    const error = replies.map(([e]) => e).find((e) => e !== null);
    if (error) throw error;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Nest closes the connection with the application. */
  async onModuleDestroy(): Promise<void> {
    await this.close();
  }
}
