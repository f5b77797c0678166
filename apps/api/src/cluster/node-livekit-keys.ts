import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import type { JoinedNodeRole } from '@tally/contracts';
import { RedisConnection } from '../infra/infra.module.js';
import { LIVEKIT_KEYS_HASH } from './node-grants.js';

const KEY_PREFIX = 'tally-node-';

/** A joined node's LiveKit API key. */
export function nodeLivekitKey(nodeId: string): string {
  return `${KEY_PREFIX}${nodeId}`;
}

/**
 * Worker and GPU nodes (egress, ingress) get a key of their own. A media node's livekit-server keeps
 * the cluster's: it verifies the tokens the API signs for clients and signs the webhooks the API checks;
 * a control node's API checks those webhooks too (docs/adr/0043-control-plane-replicas.md).
 */
export function holdsOwnLivekitKey(role: JoinedNodeRole): boolean {
  return role === 'worker' || role === 'gpu';
}

export type LivekitCredentials = Readonly<{ apiKey: string; apiSecret: string }>;

/**
 * Joined worker and GPU nodes' own LiveKit keys (docs/adr/0025). The secret is derived from the
 * cluster's LiveKit secret and the node's current Redis password hash, so the API can write it again
 * from Postgres after Redis lost it, and a re-join (a new password) changes it.
 */
@Injectable()
export class NodeLivekitKeys {
  constructor(
    private readonly redis: RedisConnection,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  credentials(nodeId: string, redisPasswordSha256: string): LivekitCredentials {
    const apiSecret = createHmac('sha256', this.config.livekit.apiSecret)
      .update(`tally-node-livekit-key\n${nodeId}\n${redisPasswordSha256}`)
      .digest('hex');
    return { apiKey: nodeLivekitKey(nodeId), apiSecret };
  }

  async put(nodeId: string, redisPasswordSha256: string): Promise<LivekitCredentials> {
    const credentials = this.credentials(nodeId, redisPasswordSha256);
    await this.redis.hset(LIVEKIT_KEYS_HASH, credentials.apiKey, credentials.apiSecret);
    return credentials;
  }

  /** Every livekit-server refuses the key within its cache time (3 s). */
  async remove(nodeId: string): Promise<void> {
    await this.redis.hdel(LIVEKIT_KEYS_HASH, nodeLivekitKey(nodeId));
  }

  /** The node ids whose keys the hash holds. */
  async nodeIds(): Promise<string[]> {
    const keys = await this.redis.hkeys(LIVEKIT_KEYS_HASH);
    return keys.filter((key) => key.startsWith(KEY_PREFIX)).map((key) => key.slice(KEY_PREFIX.length));
  }
}
