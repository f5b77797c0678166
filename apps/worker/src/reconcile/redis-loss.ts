import { Injectable, Logger } from '@nestjs/common';
import { RedisConnection } from '@tally/runtime';

/** Written by the first sweep that finds it missing, and kept as long as Redis keeps its data. */
export const SWEEP_MARKER_KEY = 'tally:sweep:marker';

export type RedisLoss = Readonly<{
  /** This sweep found the marker gone: Redis lost its data since the previous sweep (or never had any). */
  detectedNow: boolean;
  /**
   * When Redis last lost its data (this sweep's time when it is now). LiveKit keeps its rooms,
   * egresses and ingresses in the same Redis and writes them again only when they change, so its
   * lists may miss work started before this: such work is not ended for being missing from them.
   */
  lostAt: Date;
}>;

/**
 * Notices that Redis lost its data (FLUSHALL, a new empty instance, a lost disk): every reservation,
 * app policy, node registration, queue and LiveKit's own state are gone at once, while Postgres
 * still says what runs. The marker is one key; absent, the sweep restores and ends nothing for
 * missing Redis or LiveKit state.
 */
@Injectable()
export class RedisLossDetector {
  private readonly logger = new Logger(RedisLossDetector.name);

  constructor(private readonly redis: RedisConnection) {}

  async observe(now: Date): Promise<RedisLoss> {
    const written = await this.redis.set(SWEEP_MARKER_KEY, JSON.stringify({ lostAt: now.getTime() }), 'NX');
    if (written === 'OK') {
      this.logger.warn(
        'Redis has no sweep marker: it lost its data (or this is its first sweep). Restoring reservations from Postgres; nothing is ended for missing Redis or LiveKit state.',
      );
      return { detectedNow: true, lostAt: now };
    }
    const raw = await this.redis.get(SWEEP_MARKER_KEY);
    const lostAt = Number((JSON.parse(raw ?? '{}') as { lostAt?: unknown }).lostAt);
    return { detectedNow: false, lostAt: new Date(Number.isFinite(lostAt) ? lostAt : now.getTime()) };
  }
}
