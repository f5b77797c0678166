import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';

export type SentinelAddress = Readonly<{ host: string; port: number }>;

/** A Sentinel group: its Sentinels and the name they monitor the primary under (docs/adr/0040-redis-sentinel.md). */
export type RedisSentinel = Readonly<{ name: string; addresses: readonly SentinelAddress[] }>;

/**
 * Where a process's Redis is. Without `sentinel`, `url` is the server. With it, the Sentinels say
 * which server is the primary and `url` gives only the user, password and database for the servers
 * (its host is unused).
 */
export type RedisTarget = Readonly<{ url: string; sentinel: RedisSentinel | undefined }>;

const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

const SentinelAddresses = z.string().transform((text, ctx) => {
  const addresses: SentinelAddress[] = [];
  for (const item of text.split(',').map((a) => a.trim())) {
    const match = ADDRESS.exec(item);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65_535) {
      ctx.addIssue({ code: 'custom', message: `"${item}" is not host:port (e.g. 10.0.0.2:26379,10.0.0.3:26379,10.0.0.4:26379)` });
      return z.NEVER;
    }
    addresses.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return addresses;
});

const unsetWhenEmpty = (v: unknown) => (v === '' ? undefined : v);

/** The Sentinel variables, read by every process that reaches Redis (API, worker, agent). */
export const RedisSentinelEnvSchema = z.object({
  REDIS_SENTINELS: z.preprocess(unsetWhenEmpty, SentinelAddresses.optional()),
  REDIS_SENTINEL_NAME: z.preprocess(
    unsetWhenEmpty,
    z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits and _ . - only')
      .default('tally'),
  ),
});

/** The target of `REDIS_URL` and the Sentinel variables; Sentinel mode needs a redis: URL (no TLS through Sentinel). */
export function redisTarget(
  url: string,
  env: z.infer<typeof RedisSentinelEnvSchema>,
): RedisTarget | { error: Readonly<{ variable: string; message: string }> } {
  if (env.REDIS_SENTINELS === undefined) return Object.freeze({ url, sentinel: undefined });
  if (new URL(url).protocol !== 'redis:')
    return {
      error: { variable: 'REDIS_SENTINELS', message: 'Sentinel mode takes a redis:// REDIS_URL (TLS through Sentinel is not supported)' },
    };
  const addresses = Object.freeze(env.REDIS_SENTINELS.map((a) => Object.freeze(a)));
  return Object.freeze({ url, sentinel: Object.freeze({ name: env.REDIS_SENTINEL_NAME, addresses }) });
}

/** The client settings a caller chooses (retries, connecting at once or on demand, timeouts). */
export type RedisClientExtra = Pick<
  RedisOptions,
  'maxRetriesPerRequest' | 'lazyConnect' | 'enableOfflineQueue' | 'connectTimeout' | 'commandTimeout'
> & {
  retryStrategy?: (times: number) => number | null;
};

/** Options both ioredis and BullMQ take: `url` (BullMQ's form of the URL argument) or the Sentinel fields. */
export type RedisConnectionOptions = RedisClientExtra & {
  url?: string;
  sentinels?: { host: string; port: number }[];
  name?: string;
  username?: string;
  password?: string;
  db?: number;
  reconnectOnError?: (error: Error) => boolean | 1 | 2;
};

/**
 * The one place a Redis connection's options are built, for every ioredis client and BullMQ
 * connection of every process. Without Sentinel: the URL and `extra`, unchanged. With Sentinel: the
 * Sentinels (asked without credentials: their default user may only ask which server is primary),
 * the group name, and the URL's user, password and database for the servers; a connection that
 * meets a demoted primary (READONLY) reconnects through the Sentinels and resends the command.
 */
export function redisConnectionOptions(target: RedisTarget, extra: RedisClientExtra = {}): RedisConnectionOptions {
  if (target.sentinel === undefined) return { url: target.url, ...extra };
  const url = new URL(target.url);
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const db = Number.parseInt(url.pathname.slice(1), 10);
  const credentials = {
    ...(username === '' ? {} : { username }),
    ...(password === '' ? {} : { password }),
  };
  return {
    sentinels: target.sentinel.addresses.map((a) => ({ host: a.host, port: a.port })),
    name: target.sentinel.name,
    ...credentials,
    db: Number.isNaN(db) ? 0 : db,
    reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? 2 : false),
    ...extra,
  };
}

/** A new ioredis client on `target` with `extra` options (see redisConnectionOptions). */
export function createRedis(target: RedisTarget, extra: RedisClientExtra = {}): Redis {
  const { url, ...options } = redisConnectionOptions(target, extra);
  return url === undefined ? new Redis(options) : new Redis(url, options);
}
