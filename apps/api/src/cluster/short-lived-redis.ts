import { Redis, type RedisOptions } from 'ioredis';

/**
 * Runs `use` on a connection of its own that gives up after `timeoutMs` (to connect or for an answer)
 * and never retries, then closes it: for asking another Redis server or Sentinel one thing.
 */
export async function withShortLivedRedis<T>(options: RedisOptions, timeoutMs: number, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    ...options,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}
