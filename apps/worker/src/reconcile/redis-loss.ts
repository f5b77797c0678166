import { Inject, Injectable, Logger } from '@nestjs/common';
import { NodeRegistry } from '@tally/nodes';
import { RedisConnection } from '@tally/runtime';
import type { Redis } from 'ioredis';

/** Written at the end of the first sweep that finds it missing, and kept as long as Redis keeps its data. */
export const SWEEP_MARKER_KEY = 'tally:sweep:marker';

export type RedisLoss = Readonly<{
  /** This sweep found the marker gone: Redis lost its data since the previous sweep (or never had any). */
  detectedNow: boolean;
  /**
   * When Redis last lost its data (this sweep's time when it is now; undefined when it never did).
   * LiveKit keeps its rooms, egresses and ingresses in the same Redis and writes them again only when
   * they change, so its lists may miss work started before this: such work is not ended for being
   * missing from them.
   */
  lostAt: Date | undefined;
}>;

/**
 * Notices that Redis lost its data (FLUSHALL, a new empty instance, a lost disk): every reservation,
 * app policy, node registration, queue and LiveKit's own state are gone at once, while Postgres
 * still says what runs. The marker is one key; absent, the sweep restores and ends nothing for
 * missing Redis or LiveKit state, and records when the loss happened.
 */
@Injectable()
export class RedisLossDetector {
  private readonly logger = new Logger(RedisLossDetector.name);

  constructor(
    @Inject(RedisConnection) private readonly redis: Redis,
    private readonly registry: NodeRegistry,
  ) {}

  /**
   * Checks the marker every `everyMs`; once it is gone and a node heartbeats again (restoring needs
   * one), calls `sweep` once, so the ledger is rebuilt within seconds instead of at the next
   * scheduled sweep (until then admission sees no usage). Returns the function that stops watching.
   */
  watch(everyMs: number, sweep: (noticedAt: number) => Promise<void>): () => void {
    let asked = false;
    let checking = false;
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      void (async () => {
        if ((await this.redis.exists(SWEEP_MARKER_KEY)) === 1) {
          asked = false;
          return;
        }
        if (asked || (await this.registry.list()).length === 0) return;
        asked = true;
        await sweep(Date.now());
      })()
        .catch((error: unknown) => this.logger.warn(`watching for Redis losing its data failed: ${String(error)}`))
        .finally(() => (checking = false));
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  async observe(now: Date): Promise<RedisLoss> {
    const raw = await this.redis.get(SWEEP_MARKER_KEY);
    if (raw === null) {
      this.logger.warn(
        'Redis has no sweep marker: it lost its data (or this is its first sweep). Restoring reservations from Postgres; nothing is ended for missing Redis or LiveKit state.',
      );
      return { detectedNow: true, lostAt: now };
    }
    const lostAt = (JSON.parse(raw) as { lostAt?: unknown }).lostAt;
    return { detectedNow: false, lostAt: typeof lostAt === 'number' ? new Date(lostAt) : undefined };
  }

  /**
   * Ends the sweep that noticed a missing marker. It was a loss when the sweep had to restore
   * something (a first sweep on a new Redis has nothing to restore); later sweeps then keep sparing
   * work started before it. With no node heartbeating yet nothing could be restored and nothing is
   * known: the marker stays missing and the next sweep decides. True when a loss is recorded.
   */
  async settle(loss: RedisLoss, restored: number): Promise<boolean> {
    if (!loss.detectedNow || (await this.registry.list()).length === 0) return false;
    const lost = restored > 0;
    const value = JSON.stringify({ lostAt: lost ? loss.lostAt?.getTime() : null });
    await this.redis.set(SWEEP_MARKER_KEY, value, 'NX');
    return lost;
  }
}
