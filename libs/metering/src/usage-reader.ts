import { Prisma, type PrismaClient } from '@tally/db';
import { floorHour, type Quantity } from './meters.js';
import { type AppScope, at, hourlyFromIntervals, scopeSql } from './usage-sql.js';
import { UsageCursors } from './usage-cursors.js';

/** Seconds × weight of one app's meter and dimension in one hour. */
export type HourQuantity = Readonly<{ appId: string; meter: string; dimension: string; hour: Date; quantity: number }>;

type Row = { appId: string; meter: string; dimension: string; hourMs: number; quantity: number };

/**
 * Reads usage per hour: closed hours the roll-up has and no interval changed since come from
 * `UsageHour` (a month is ~720 indexed rows per meter of one app, however many apps exist); the
 * rest is computed from the intervals, open ones up to `now`.
 */
export class UsageReader {
  private readonly cursors: UsageCursors;

  constructor(private readonly prisma: PrismaClient) {
    this.cursors = new UsageCursors(prisma);
  }

  async hourly(scope: AppScope, from: Date, to: Date, now: Date): Promise<HourQuantity[]> {
    const boundary = await this.rolledUpTo(scope, from, to);
    const rolled =
      boundary > from
        ? await this.prisma.$queryRaw<Row[]>`
            SELECT "appId", meter, dimension, (EXTRACT(EPOCH FROM hour) * 1000)::float8 AS "hourMs", quantity
            FROM "UsageHour"
            WHERE ${scopeSql(scope, Prisma.sql`"appId"`)} AND hour >= ${at(from)} AND hour < ${at(boundary)}`
        : [];
    const liveTo = new Date(Math.min(to.getTime(), floorHour(now).getTime() + 3_600_000));
    const live =
      liveTo > boundary
        ? await this.prisma.$queryRaw<Row[]>`
            SELECT q."appId", q.meter, q.dimension, (EXTRACT(EPOCH FROM q.hour) * 1000)::float8 AS "hourMs", q.quantity
            FROM (${hourlyFromIntervals(scope, boundary, liveTo, now)}) q`
        : [];
    return [...rolled, ...live].map((r) => ({
      appId: r.appId,
      meter: r.meter,
      dimension: r.dimension,
      hour: new Date(Number(r.hourMs)),
      quantity: Number(r.quantity),
    }));
  }

  /**
   * Usage of every app since metering began: the rolled-up totals plus what the intervals say since
   * the roll-up's last closed hour, open ones up to `now` (what the tally_usage_*_total counters export).
   */
  async totalsSinceStart(now: Date): Promise<(Quantity & { appId: string })[]> {
    const closed = await this.cursors.get('rollup.closed');
    const rolled = await this.prisma.$queryRaw<{ appId: string; meter: string; dimension: string; quantity: number }[]>`
      SELECT "appId", meter, dimension, quantity FROM "UsageTotal"`;
    const from = closed ?? new Date(0);
    const liveTo = new Date(floorHour(now).getTime() + 3_600_000);
    const live =
      closed && liveTo > from
        ? await this.prisma.$queryRaw<{ appId: string; meter: string; dimension: string; quantity: number }[]>`
            SELECT q."appId", q.meter, q.dimension, SUM(q.quantity)::float8 AS quantity
            FROM (${hourlyFromIntervals('all', from, liveTo, now)}) q GROUP BY q."appId", q.meter, q.dimension`
        : [];
    return [...rolled, ...live].map((r) => ({ appId: r.appId, meter: r.meter, dimension: r.dimension, quantity: Number(r.quantity) }));
  }

  /** The first hour of [from, to) that is not both closed by the roll-up and unchanged since. */
  private async rolledUpTo(scope: AppScope, from: Date, to: Date): Promise<Date> {
    const [closed, changes] = await Promise.all([this.cursors.get('rollup.closed'), this.cursors.get('rollup.changes')]);
    if (!closed || !changes) return from;
    const [dirty] = await this.prisma.$queryRaw<{ startMs: number | null }[]>`
      SELECT (EXTRACT(EPOCH FROM MIN("startedAt")) * 1000)::float8 AS "startMs" FROM "UsageInterval"
      WHERE "changedAt" >= ${at(changes)} AND ${scopeSql(scope, Prisma.sql`"appId"`)} AND "startedAt" IS NOT NULL`;
    let boundary = closed;
    if (dirty?.startMs != null) boundary = new Date(Math.min(boundary.getTime(), floorHour(new Date(Number(dirty.startMs))).getTime()));
    return new Date(Math.min(Math.max(boundary.getTime(), from.getTime()), to.getTime()));
  }
}
