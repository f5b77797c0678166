import { Prisma } from '@tally/db';

/** A JS instant as the UTC wall time Prisma stores in `timestamp(3)` columns. */
export function at(instant: Date): Prisma.Sql {
  return Prisma.sql`(${instant.toISOString()}::timestamptz AT TIME ZONE 'UTC')`;
}

/** Which apps a statement covers: one app, or every app. */
export type AppScope = Readonly<{ appId: string }> | 'all';

export function scopeSql(scope: AppScope, column: Prisma.Sql): Prisma.Sql {
  return scope === 'all' ? Prisma.sql`TRUE` : Prisma.sql`${column} = ${scope.appId}`;
}

/**
 * Seconds × weight of every interval's overlap with each hour of [from, to), open intervals counted
 * up to `now`: rows of (appId, meter, dimension, hour, quantity). Both the roll-up and the reads for
 * hours not rolled up yet use this one statement, so they cannot disagree.
 */
export function hourlyFromIntervals(scope: AppScope, from: Date, to: Date, now: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT i."appId", i.meter, i.dimension, h.hour,
           SUM(i.weight * EXTRACT(EPOCH FROM (
             LEAST(COALESCE(i."endedAt", ${at(now)}), h.hour + interval '1 hour') - GREATEST(i."startedAt", h.hour)
           )))::float8 AS quantity
    FROM "UsageInterval" i
    JOIN generate_series(${at(from)}, ${at(to)} - interval '1 hour', interval '1 hour') AS h(hour)
      ON i."startedAt" < h.hour + interval '1 hour' AND COALESCE(i."endedAt", ${at(now)}) > h.hour
    WHERE ${scopeSql(scope, Prisma.sql`i."appId"`)}
      AND i."startedAt" IS NOT NULL AND i."startedAt" < ${at(to)} AND i."startedAt" < ${at(now)}
      AND (i."endedAt" IS NULL OR (i."endedAt" > ${at(from)} AND i."endedAt" > i."startedAt"))
    GROUP BY i."appId", i.meter, i.dimension, h.hour`;
}
