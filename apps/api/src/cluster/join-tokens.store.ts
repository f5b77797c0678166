import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { RedisConnection } from '../infra/infra.module.js';

const key = (token: string) => `tally:join:${createHash('sha256').update(token).digest('hex')}`;

/**
 * One-time join tokens in Redis: only a hash of the token is stored, with the token's TTL, and
 * taking one is a GETDEL, so two nodes racing with the same token cannot both join.
 */
@Injectable()
export class JoinTokenStore {
  constructor(private readonly redis: RedisConnection) {}

  async issue(ttlS: number): Promise<string> {
    const token = `tjt_${randomBytes(32).toString('base64url')}`;
    await this.redis.set(key(token), '1', 'EX', ttlS);
    return token;
  }

  /** Whether a token was issued and is neither spent nor expired; does not spend it. */
  async isValid(token: string): Promise<boolean> {
    return (await this.redis.exists(key(token))) === 1;
  }

  /** True once for a token that was issued and has not expired. */
  async take(token: string): Promise<boolean> {
    return (await this.redis.getdel(key(token))) !== null;
  }
}
