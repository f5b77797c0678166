import { Injectable } from '@nestjs/common';
import { RedisConnection } from '../infra/infra.module.js';

/** ACL commands on the origin's Redis, through the API's own (administrative) connection. */
@Injectable()
export class RedisAcl {
  constructor(private readonly redis: RedisConnection) {}

  async setUser(args: readonly string[]): Promise<void> {
    await this.redis.call('ACL', 'SETUSER', ...args);
  }

  /** Deletes the user, which also closes every connection authenticated as it; then closes any left. */
  async deleteUser(user: string): Promise<void> {
    await this.redis.call('ACL', 'DELUSER', user);
    await this.redis.call('CLIENT', 'KILL', 'USER', user).catch(() => undefined);
  }

  /** The names of every ACL user of the server the connection is on. */
  async users(): Promise<string[]> {
    return (await this.redis.call('ACL', 'USERS')) as string[];
  }

  /** Every user of the server as `ACL LIST` gives it: `user NAME on #<sha256> …`, a valid redis.conf line. */
  async list(): Promise<string[]> {
    return (await this.redis.call('ACL', 'LIST')) as string[];
  }

  /** Runs `listener` whenever the connection is (re)established: a restarted Redis lost its ACL users. */
  onReady(listener: () => void): void {
    this.redis.on('ready', listener);
  }
}
