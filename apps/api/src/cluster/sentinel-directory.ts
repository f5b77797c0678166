import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { sentinelsInAnswer } from './sentinel-addresses.js';
import { withShortLivedRedis } from './short-lived-redis.js';

/** How long one Sentinel may take to answer before a join goes on without it. */
const ASK_TIMEOUT_MS = 2_000;

/**
 * The Sentinels the API's own Sentinels know of (`SENTINEL sentinels <name>`, which their
 * password-less default user may ask; docs/adr/0040-redis-sentinel.md), as they announce themselves
 * to each other: the addresses the other hosts reach them on.
 */
@Injectable()
export class SentinelDirectory {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  /** Every Sentinel any of the API's Sentinels reports; none without Sentinel mode or when none answers. */
  async discovered(): Promise<string[]> {
    const sentinel = this.config.redis.sentinel;
    if (sentinel === undefined) return [];
    const answers = await Promise.all(sentinel.addresses.map((a) => this.ask(a.host, a.port, sentinel.name)));
    return answers.flat();
  }

  private ask(host: string, port: number, name: string): Promise<string[]> {
    return withShortLivedRedis({ host, port }, ASK_TIMEOUT_MS, async (client) =>
      sentinelsInAnswer(await client.call('SENTINEL', 'SENTINELS', name)),
    ).catch(() => []);
  }
}
