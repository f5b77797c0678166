import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';

/** The API exports these running totals as tally_reconciler_repairs_total{kind} (apps/api/src/metrics/metric-names.ts). */
export const REPAIRS_KEY = 'tally:metrics:repairs';

export type SweepReport = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** Adds a sweep's repairs (`<area>.<kind>` → n) to the running totals in Redis. */
export class RepairCounter {
  private readonly logger = new Logger(RepairCounter.name);

  constructor(private readonly redis: Redis) {}

  /** A metrics failure never fails the sweep: it is logged and the repairs go uncounted. */
  async add(report: SweepReport): Promise<void> {
    const counts = Object.entries(report).flatMap(([area, r]) => Object.entries(r).map(([kind, n]) => [`${area}.${kind}`, n] as const));
    const repaired = counts.filter(([, n]) => n > 0);
    if (repaired.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [kind, n] of repaired) pipeline.hincrby(REPAIRS_KEY, kind, n);
    try {
      await pipeline.exec();
    } catch (error) {
      this.logger.warn(`counting reconciliation repairs failed: ${String(error)}`);
    }
  }
}
