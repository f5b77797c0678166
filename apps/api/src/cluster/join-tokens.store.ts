import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JoinedNodeRole, NodeId } from '@tally/contracts';
import { z } from 'zod';
import { RedisConnection } from '../infra/infra.module.js';

const key = (token: string) => `tally:join:${createHash('sha256').update(token).digest('hex')}`;

/** What a join token was made for: a join with another role or name, or asking otherwise for a Redis replica, is refused. */
export const JoinTokenBinding = z.object({ role: JoinedNodeRole, name: NodeId, redisReplica: z.boolean().default(false) });
export type JoinTokenBinding = z.output<typeof JoinTokenBinding>;

/**
 * One-time join tokens in Redis: only a hash of the token is stored, with the role and name it was
 * made for and the token's TTL, and taking one is a GETDEL, so two nodes racing with the same token
 * cannot both join.
 */
@Injectable()
export class JoinTokenStore {
  constructor(private readonly redis: RedisConnection) {}

  async issue(binding: JoinTokenBinding, ttlS: number): Promise<string> {
    const token = `tjt_${randomBytes(32).toString('base64url')}`;
    await this.redis.set(key(token), JSON.stringify(JoinTokenBinding.parse(binding)), 'EX', ttlS);
    return token;
  }

  /** Whether a token was issued and is neither spent nor expired; does not spend it. */
  async isValid(token: string): Promise<boolean> {
    return (await this.redis.exists(key(token))) === 1;
  }

  /** What a live token is bound to, without spending it. */
  async peek(token: string): Promise<JoinTokenBinding | undefined> {
    return decode(await this.redis.get(key(token)));
  }

  /** The binding, once, for a token that was issued and has not expired. */
  async take(token: string): Promise<JoinTokenBinding | undefined> {
    return decode(await this.redis.getdel(key(token)));
  }
}

function decode(raw: string | null): JoinTokenBinding | undefined {
  if (raw === null) return undefined;
  try {
    const parsed = JoinTokenBinding.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
