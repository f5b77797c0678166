import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { RedisConnection } from '../infra/infra.module.js';

/** A viewer's entry lapses this long after its process last refreshed it (a crashed process's viewers drop out). */
const LAPSE_MS = 30_000;
const REFRESH_MS = 10_000;

/**
 * How many viewers watch each camera, across every API process: a Redis sorted set per camera of
 * viewer ids scored by when they lapse. Each process refreshes its own viewers while they watch.
 */
@Injectable()
export class CameraViewerPresence implements OnModuleDestroy {
  private readonly logger = new Logger(CameraViewerPresence.name);
  /** This process's viewers: viewer id → camera id. */
  private readonly mine = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisConnection,
    private readonly clock: Clock,
  ) {
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  /** Counts a viewer of the camera until the returned function is called. */
  joined(cameraId: string): () => void {
    const viewerId = randomUUID();
    this.mine.set(viewerId, cameraId);
    this.write(this.redis.multi().zadd(key(cameraId), this.lapseAt(), viewerId).pexpire(key(cameraId), LAPSE_MS).exec());
    return () => {
      if (!this.mine.delete(viewerId)) return;
      this.write(this.redis.zrem(key(cameraId), viewerId));
    };
  }

  /** Live viewers of each camera; cameras nobody watches are absent. */
  async counts(cameraIds: readonly string[]): Promise<Map<string, number>> {
    if (cameraIds.length === 0) return new Map();
    const now = this.clock.now().getTime();
    const pipeline = this.redis.pipeline();
    for (const id of cameraIds) pipeline.zcount(key(id), `(${now}`, '+inf');
    const replies = (await pipeline.exec()) ?? [];
    const result = new Map<string, number>();
    cameraIds.forEach((id, i) => {
      const n = Number(replies[i]?.[1] ?? 0);
      if (n > 0) result.set(id, n);
    });
    return result;
  }

  /** The camera was deleted: its set goes (its viewers here are being disconnected). */
  async forget(cameraId: string): Promise<void> {
    await this.redis.del(key(cameraId));
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private refresh(): void {
    if (this.mine.size === 0) return;
    const lapseAt = this.lapseAt();
    const pipeline = this.redis.pipeline();
    const cameras = new Set<string>();
    for (const [viewerId, cameraId] of this.mine) {
      pipeline.zadd(key(cameraId), lapseAt, viewerId);
      cameras.add(cameraId);
    }
    // Entries of processes that stopped refreshing are dropped here; the key lives as long as its newest entry.
    const now = this.clock.now().getTime();
    for (const cameraId of cameras) {
      pipeline.zremrangebyscore(key(cameraId), '-inf', now);
      pipeline.pexpire(key(cameraId), LAPSE_MS);
    }
    this.write(pipeline.exec());
  }

  private lapseAt(): number {
    return this.clock.now().getTime() + LAPSE_MS;
  }

  private write(pending: Promise<unknown>): void {
    pending.catch((error: unknown) => this.logger.warn(`camera viewer presence write failed: ${String(error)}`));
  }
}

function key(cameraId: string): string {
  return `tally:camera:viewers:${cameraId}`;
}
