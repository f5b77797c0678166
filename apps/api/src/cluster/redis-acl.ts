import { Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RedisConnection } from '../infra/infra.module.js';
import { withShortLivedRedis } from './short-lived-redis.js';

/** How long a replica may take to accept a connection or answer a command before it is skipped. */
const REPLICA_TIMEOUT_MS = 2_000;

/** The ACL commands Tally runs on one Redis server. */
export class AclServer {
  constructor(protected readonly redis: Redis) {}

  async setUser(args: readonly string[]): Promise<void> {
    await this.redis.call('ACL', 'SETUSER', ...args);
  }

  /** Deletes the user, which also closes every connection authenticated as it; then closes any left. */
  async deleteUser(user: string): Promise<void> {
    await this.redis.call('ACL', 'DELUSER', user);
    await this.redis.call('CLIENT', 'KILL', 'USER', user).catch(() => undefined);
  }

  /** The names of every ACL user of the server. */
  async users(): Promise<string[]> {
    return (await this.redis.call('ACL', 'USERS')) as string[];
  }
}

/**
 * ACL commands on the primary, through the API's own (administrative) connection, and on each of its
 * replicas, through a short-lived connection as the same user (each replica holds the primary's
 * server users: docs/adr/0040-redis-sentinel.md).
 */
@Injectable()
export class RedisAcl extends AclServer {
  constructor(redis: RedisConnection) {
    super(redis);
  }

  /** Every user of the server as `ACL LIST` gives it: `user NAME on #<sha256> …`, a valid redis.conf line. */
  async list(): Promise<string[]> {
    return (await this.redis.call('ACL', 'LIST')) as string[];
  }

  /** Runs `listener` whenever the connection is (re)established: a restarted Redis lost its ACL users. */
  onReady(listener: () => void): void {
    this.redis.on('ready', listener);
  }

  /** The replicas the primary lists (`ROLE`), as host:port. */
  async replicas(): Promise<string[]> {
    const role = (await this.redis.call('ROLE')) as unknown[];
    if (role[0] !== 'master' || !Array.isArray(role[2])) return [];
    return (role[2] as unknown[][]).map(([host, port]) => `${String(host)}:${String(port)}`);
  }

  /**
   * Runs `apply` on every replica at once; a replica that cannot be reached or refuses is skipped.
   * Returns what went wrong, one line per replica that was skipped.
   */
  async onEachReplica(apply: (replica: AclServer) => Promise<void>): Promise<string[]> {
    const { username, password } = this.redis.options;
    const failed = await Promise.all(
      (await this.replicas()).map(async (address) => {
        const separator = address.lastIndexOf(':');
        const server = {
          host: address.slice(0, separator),
          port: Number(address.slice(separator + 1)),
          ...(username === undefined ? {} : { username }),
          ...(password === undefined ? {} : { password }),
        };
        try {
          await withShortLivedRedis(server, REPLICA_TIMEOUT_MS, (client) => apply(new AclServer(client)));
          return undefined;
        } catch (error) {
          return `${address}: ${error instanceof Error ? error.message : String(error)}`;
        }
      }),
    );
    return failed.filter((line) => line !== undefined);
  }
}
