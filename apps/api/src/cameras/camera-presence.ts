import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { RedisConnection } from '../infra/infra.module.js';

/**
 * Whether a camera is connected to any API process, and when it last sent a frame: a Redis key per
 * camera refreshed at most once a second, expiring with the idle timeout, so every replica can answer.
 */
@Injectable()
export class CameraPresence {
  private readonly ttlMs: number;
  private readonly written = new Map<string, number>();

  constructor(
    private readonly redis: RedisConnection,
    @Inject(CONFIG) config: Config,
  ) {
    this.ttlMs = config.cameras.idleTimeoutS * 1000;
  }

  async seen(cameraId: string, at: Date): Promise<void> {
    const last = this.written.get(cameraId) ?? 0;
    if (at.getTime() - last < 1000) return;
    this.written.set(cameraId, at.getTime());
    await this.redis.set(key(cameraId), String(at.getTime()), 'PX', this.ttlMs);
  }

  async gone(cameraId: string): Promise<void> {
    this.written.delete(cameraId);
    await this.redis.del(key(cameraId));
  }

  /** The last frame's time for each connected camera. */
  async lastFrames(cameraIds: readonly string[]): Promise<Map<string, Date>> {
    if (cameraIds.length === 0) return new Map();
    const values = await this.redis.mget(...cameraIds.map(key));
    const result = new Map<string, Date>();
    cameraIds.forEach((id, i) => {
      const v = values[i];
      if (v) result.set(id, new Date(Number(v)));
    });
    return result;
  }
}

function key(cameraId: string): string {
  return `tally:camera:seen:${cameraId}`;
}
