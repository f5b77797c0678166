import { Inject, Injectable } from '@nestjs/common';
import { NodeRegistry } from '@tally/nodes';
import { Clock, RedisConnection } from '@tally/runtime';
import type { Redis } from 'ioredis';

/**
 * How long after this process's Redis connection came back (a Sentinel failover it followed, a
 * restarted server) a node missing from the pool is not taken for gone: its heartbeat may have expired
 * while there was no primary, and it beats again within its interval (5 s by default, the key lives
 * three) once it reaches the new one. Twice that TTL, so a loaded host is not mistaken either.
 */
export const HEARTBEATS_RETURN_MS = 30_000;

/** Whether absence from the pool means a node left, `reconnectedAt` being when the connection last came back (ms). */
export function absenceMeansGone(reconnectedAt: number | undefined, nowMs: number): boolean {
  return reconnectedAt === undefined || nowMs - reconnectedAt >= HEARTBEATS_RETURN_MS;
}

export type Pool = Readonly<{
  /** Nodes whose heartbeat is in Redis now. */
  live: ReadonlySet<string>;
  /** False in the moments after a reconnect: a node not in `live` may only not have beaten yet. */
  absenceMeansGone: boolean;
}>;

/**
 * The pool as the sweeps judge it: which nodes beat, and whether one that does not has left (its
 * reservations freed, its recordings failed) or may be a node whose heartbeat expired during a
 * Redis failover (docs/adr/0040-redis-sentinel.md).
 */
@Injectable()
export class NodeAbsence {
  private connects = 0;
  private reconnectedAt: number | undefined;

  constructor(
    private readonly registry: NodeRegistry,
    @Inject(RedisConnection) redis: Redis,
    private readonly clock: Clock,
  ) {
    if (redis.status === 'ready') this.connects = 1;
    redis.on('ready', () => {
      this.connects += 1;
      if (this.connects > 1) this.reconnectedAt = this.clock.now().getTime();
    });
  }

  async pool(): Promise<Pool> {
    const live = new Set((await this.registry.list()).map((n) => n.nodeId));
    return { live, absenceMeansGone: absenceMeansGone(this.reconnectedAt, this.clock.now().getTime()) };
  }

  /** Whether the node's heartbeat is there; list() skips one it cannot parse (an agent of another version), but that node is alive. */
  async beating(nodeId: string): Promise<boolean> {
    try {
      return (await this.registry.get(nodeId)) !== undefined;
    } catch {
      return true;
    }
  }
}
