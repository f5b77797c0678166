import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { floorHour, UsageIntervals } from '@tally/metering';
import type { FastifyReply } from 'fastify';
import { Clock } from '../common/clock.js';

/** How often the bytes served are added to the apps' counts: what a killed API process can lose. */
const FLUSH_MS = 1_000;

/**
 * HLS bytes served (docs/adr/0028-usage-metering.md): the body bytes of every public playlist and
 * segment response that was sent in full (a 200, or a 206 range), added up per app and hour here and
 * added to the app's count for that hour every second, and when the process stops. A write that
 * fails is kept and added again at the next flush.
 */
@Injectable()
export class HlsBytesMeter implements OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(HlsBytesMeter.name);
  /** Bytes not yet written: `<appId> <hour ms>` → bytes. */
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly intervals: UsageIntervals,
    private readonly clock: Clock,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Counts the body of `reply` for `appId` once the whole response has been handed to the connection. */
  meter(appId: string, reply: FastifyReply): void {
    if (reply.request.method === 'HEAD') return;
    const res = reply.raw;
    res.once('finish', () => {
      if (res.statusCode !== 200 && res.statusCode !== 206) return;
      const bytes = Number(res.getHeader('content-length'));
      if (!Number.isSafeInteger(bytes) || bytes <= 0) return;
      this.add(`${appId} ${floorHour(this.clock.now()).getTime()}`, bytes);
    });
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Before the HTTP server closes and Prisma disconnects. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /** Responses the closing HTTP server still finished; kept and logged if Prisma has already gone. */
  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /** One flush at a time, so a slow write is never overtaken by the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private add(key: string, bytes: number): void {
    this.pending.set(key, (this.pending.get(key) ?? 0) + bytes);
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const now = this.clock.now();
    for (const [key, bytes] of batch) {
      const [appId = '', hourMs = '0'] = key.split(' ');
      try {
        await this.intervals.addCount('hls_bytes', appId, new Date(Number(hourMs)), bytes, now);
      } catch (error) {
        this.add(key, bytes);
        this.logger.warn(`HLS bytes served not written yet (kept for the next flush): ${String(error)}`);
      }
    }
  }
}
