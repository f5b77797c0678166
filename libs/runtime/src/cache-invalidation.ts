import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { CONFIG, type Config, createRedis } from '@tally/config';
import { INVALIDATION_CHANNEL as CHANNEL, Invalidation } from '@tally/contracts';
import type { Redis } from 'ioredis';
import { RedisConnection } from './redis-connection.js';

export type { Invalidation } from '@tally/contracts';

/**
 * The one invalidation bus of every Nest process, over Redis pub/sub: whatever ends a stream, revokes
 * a key or changes an app (API or worker) publishes here, and every process's in-process caches
 * listen. A change is applied locally at once and published; every process (this one included)
 * applies it when the message arrives. While the subscription is down, `live` is false and caches
 * must not serve: messages sent meanwhile are lost, so on reconnect every listener is told to drop
 * everything.
 */
@Injectable()
export class CacheInvalidation implements OnModuleInit, OnApplicationShutdown {
  private readonly subscriber: Redis;
  private readonly listeners = new Set<(change: Invalidation) => void>();
  private subscribed = false;

  constructor(
    @Inject(CONFIG) config: Config,
    private readonly redis: RedisConnection,
  ) {
    this.subscriber = createRedis(config.redis, { lazyConnect: true, maxRetriesPerRequest: null });
  }

  get live(): boolean {
    return this.subscribed && this.subscriber.status === 'ready';
  }

  onChange(listener: (change: Invalidation) => void): void {
    this.listeners.add(listener);
  }

  async publish(change: Invalidation): Promise<void> {
    this.dispatch(change);
    await this.redis.publish(CHANNEL, JSON.stringify(change));
  }

  async onModuleInit(): Promise<void> {
    this.subscriber.on('message', (_channel: string, raw: string) => {
      const parsed = Invalidation.safeParse(safeJson(raw));
      if (parsed.success) this.dispatch(parsed.data);
      else new Logger(CacheInvalidation.name).warn(`ignoring malformed invalidation ${raw.slice(0, 200)}`);
    });
    this.subscriber.on('close', () => this.dispatch({ kind: 'all' }));
    // ioredis re-subscribes after a reconnect; whatever was published in between is unknown.
    this.subscriber.on('ready', () => this.dispatch({ kind: 'all' }));
    await this.subscriber.connect();
    await this.subscriber.subscribe(CHANNEL);
    this.subscribed = true;
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscribed = false;
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  private dispatch(change: Invalidation): void {
    for (const listener of this.listeners) listener(change);
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
