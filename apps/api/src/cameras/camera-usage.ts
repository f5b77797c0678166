import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { CONNECTION_SEEN_MS, type ConnectionUsage, UsageIntervals } from '@tally/metering';
import { Clock } from '../common/clock.js';

const WRITE_ATTEMPTS = 3;

export type MeteredCamera = Readonly<{ id: string; appId: string }>;

/**
 * Camera and camera-viewer minutes (docs/adr/0028-usage-metering.md): each connection this process
 * holds is one usage interval, opened when it connects and ended when it closes, keyed by an id
 * made for it, so every write is idempotent. While open it is marked seen every
 * CONNECTION_SEEN_MS; if this process dies, the worker's sweep ends it when it was last seen.
 */
@Injectable()
export class CameraUsage implements OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger(CameraUsage.name);
  /** Open connections of this process, by interval id. */
  private readonly open = new Map<string, ConnectionUsage>();
  /** Writes under way, awaited before the process lets Prisma go. */
  private readonly writing = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly intervals: UsageIntervals,
    private readonly clock: Clock,
  ) {
    this.timer = setInterval(() => void this.markSeen(), CONNECTION_SEEN_MS);
    this.timer.unref();
  }

  /** Meters one connection from now until the returned function is called (later calls change nothing). */
  opened(meter: ConnectionUsage['meter'], camera: MeteredCamera): () => void {
    const usage: ConnectionUsage = {
      meter,
      connectionId: randomUUID(),
      appId: camera.appId,
      cameraId: camera.id,
      startedAt: this.clock.now(),
      endedAt: undefined,
    };
    const id = `${meter}:${usage.connectionId}`;
    this.open.set(id, usage);
    this.track(this.write(usage));
    return () => {
      if (!this.open.delete(id)) return;
      this.track(this.write({ ...usage, endedAt: this.clock.now() }));
    };
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /**
   * A stopping process ends what it still holds (its sockets were closed in onModuleDestroy) and
   * waits for the writes under way; Prisma is still connected here.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const endedAt = this.clock.now();
    const open = [...this.open.values()];
    this.open.clear();
    for (const usage of open) this.track(this.write({ ...usage, endedAt }));
    await Promise.all([...this.writing]);
  }

  private track(write: Promise<void>): void {
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write));
  }

  private async markSeen(): Promise<void> {
    if (this.open.size === 0) return;
    await this.intervals.seen([...this.open.keys()], this.clock.now()).catch((error: unknown) => {
      this.logger.warn(`camera usage refresh failed: ${String(error)}`);
    });
  }

  /** Idempotent, so a write that failed is simply tried again. */
  private async write(usage: ConnectionUsage): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.intervals.connection(usage, this.clock.now());
        return;
      } catch (error) {
        if (attempt >= WRITE_ATTEMPTS) {
          this.logger.warn(`camera usage write failed: ${String(error)}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, attempt * 500));
      }
    }
  }
}
