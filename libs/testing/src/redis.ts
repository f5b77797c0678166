import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startChild } from './child.js';
import { freePort, waitFor } from './ports.js';

export type TestRedis = Readonly<{ url: string; port: number; stop(): Promise<void> }>;

/** A throwaway redis-server on a free loopback port, no persistence. */
export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-redis-'));
  const port = await freePort();
  const child = startChild(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir],
    join(dir, 'redis.log'),
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitFor('redis', async () => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG' ? true : undefined;
    } finally {
      client.disconnect();
    }
  });
  return {
    url,
    port,
    async stop() {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
