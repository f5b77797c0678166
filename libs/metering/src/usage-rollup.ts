import { Prisma, type PrismaClient } from '@tally/db';
import { floorHour } from './meters.js';
import { type AppScope, at, hourlyFromIntervals, scopeSql } from './usage-sql.js';

/** An interval change written this long before the roll-up read it may still have been uncommitted. */
const CHANGE_SLACK_MS = 10_000;

export type RollupReport = Readonly<{
  closedThrough: Date;
  recomputedApps: number;
  newHours: number;
  deletedHours: number;
  deletedIntervals: number;
}>;

/**
 * Keeps `UsageHour` equal to what the intervals say for every closed hour: new closed hours for all
 * apps, and again every hour an interval changed since the last run spans. Each hour is recomputed
 * from the intervals (never incremented), so a repeated or interrupted run leaves the same rows.
 */
export class UsageRollup {
  constructor(private readonly prisma: PrismaClient) {}

  async run(now: Date, retentionMonths: number): Promise<RollupReport> {
    const currentHour = floorHour(now);
    const changesThrough = new Date(now.getTime() - CHANGE_SLACK_MS);
    return this.prisma.$transaction(
      async (tx) => {
        // One roll-up at a time across worker processes; a second waits, then finds nothing to do.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('tally.usage.rollup'))`;
        const cursors = await tx.usageCursor.findMany({ where: { id: { in: ['rollup.closed', 'rollup.changes'] } } });
        const changes = cursors.find((c) => c.id === 'rollup.changes')?.at ?? new Date(0);
        let closed = cursors.find((c) => c.id === 'rollup.closed')?.at;
        if (!closed) {
          const [first] = await tx.$queryRaw<{ startMs: number | null }[]>`
            SELECT (EXTRACT(EPOCH FROM MIN("startedAt")) * 1000)::float8 AS "startMs" FROM "UsageInterval"`;
          closed = first?.startMs != null ? floorHour(new Date(Number(first.startMs))) : currentHour;
        }
        const dirty = await tx.$queryRaw<{ appId: string; startMs: number }[]>`
          SELECT "appId", (EXTRACT(EPOCH FROM MIN("startedAt")) * 1000)::float8 AS "startMs" FROM "UsageInterval"
          WHERE "changedAt" >= ${at(changes)} AND "startedAt" IS NOT NULL AND "startedAt" < ${at(closed)}
          GROUP BY "appId"`;
        // Each recomputed hour's old rows leave UsageTotal and its new rows enter it, so the totals
        // follow the hours exactly; hours deleted by retention stay in the totals (counters never drop).
        const recompute = async (scope: AppScope, from: Date, to: Date): Promise<number> => {
          if (to <= from) return 0;
          await tx.$executeRaw`
            WITH gone AS (
              DELETE FROM "UsageHour" WHERE ${scopeSql(scope, Prisma.sql`"appId"`)} AND hour >= ${at(from)} AND hour < ${at(to)}
              RETURNING "appId", meter, dimension, quantity
            )
            ${addToTotals(Prisma.sql`gone`, -1)}`;
          return tx.$executeRaw`
            WITH added AS (
              INSERT INTO "UsageHour" ("appId", meter, dimension, hour, quantity)
              SELECT q."appId", q.meter, q.dimension, q.hour, q.quantity FROM (${hourlyFromIntervals(scope, from, to, now)}) q
              WHERE q.quantity > 0
              RETURNING "appId", meter, dimension, quantity
            )
            ${addToTotals(Prisma.sql`added`, 1)}`;
        };
        for (const d of dirty) await recompute({ appId: d.appId }, floorHour(new Date(Number(d.startMs))), closed);
        const newHours = closed < currentHour ? await recompute('all', closed, currentHour) : 0;
        const closedThrough = closed < currentHour ? currentHour : closed;
        await tx.usageCursor.upsert({
          where: { id: 'rollup.closed' },
          create: { id: 'rollup.closed', at: closedThrough },
          update: { at: closedThrough },
        });
        await tx.usageCursor.upsert({
          where: { id: 'rollup.changes' },
          create: { id: 'rollup.changes', at: changesThrough },
          update: { at: changesThrough },
        });
        const cutoff = new Date(now);
        cutoff.setUTCMonth(cutoff.getUTCMonth() - retentionMonths);
        const deletedHours = await tx.$executeRaw`DELETE FROM "UsageHour" WHERE hour < ${at(cutoff)}`;
        const deletedIntervals = await tx.$executeRaw`DELETE FROM "UsageInterval" WHERE "endedAt" < ${at(cutoff)}`;
        return { closedThrough, recomputedApps: dirty.length, newHours, deletedHours, deletedIntervals };
      },
      { timeout: 120_000, maxWait: 60_000 },
    );
  }
}

function addToTotals(rows: Prisma.Sql, sign: 1 | -1): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "UsageTotal" ("appId", meter, dimension, quantity)
    SELECT "appId", meter, dimension, ${sign}::float8 * SUM(quantity) FROM ${rows} GROUP BY "appId", meter, dimension
    ON CONFLICT ("appId", meter, dimension) DO UPDATE SET quantity = "UsageTotal".quantity + EXCLUDED.quantity`;
}
