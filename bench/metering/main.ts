/**
 * Reading a month of one app's usage (what `GET /v1/apps/{appId}/metering` runs: UsageReader.hourly)
 * while 10 apps and then 10,000 apps have a month of rolled-up hours each. Every app's UsageHour rows
 * and one ended interval are written straight into Postgres, the roll-up cursors set past them, so
 * the read takes the rolled-up path a month after it ended. The 10-app read is the baseline.
 */
import { performance } from 'node:perf_hooks';
import { createPrismaClient, runMigrations } from '@tally/db';
import { UsageCursors, UsageReader } from '@tally/metering';
import { createDatabase, startPostgres } from '@tally/testing';
import { benchArgs } from '../lib/args.js';
import { progress } from '../lib/progress.js';
import { writeResult } from '../lib/results.js';
import { mean, quantile } from '../lib/stats.js';
import { fixed, markdownTable, ratio } from '../lib/table.js';

const args = benchArgs({ appCounts: [10, 10_000], days: 30, samples: 300, warmUp: 30 });
const log = (message: string) => progress('metering', message);
const HOUR_MS = 3_600_000;
const appId = (n: number) => `app_${n.toString(36).padStart(16, '0')}`;

const postgres = await startPostgres();
const databaseUrl = await createDatabase(postgres.url, 'bench_metering');
await runMigrations(databaseUrl);
const prisma = createPrismaClient(databaseUrl);
type Row = Readonly<{ apps: number; usageHours: number; p50Ms: number; p99Ms: number; meanMs: number; hoursRead: number }>;

try {
  const monthEnd = new Date(Math.floor(Date.now() / (24 * HOUR_MS)) * 24 * HOUR_MS);
  const monthStart = new Date(monthEnd.getTime() - args.days * 24 * HOUR_MS);
  const cursors = new UsageCursors(prisma);
  await cursors.set('rollup.closed', monthEnd);
  await cursors.set('rollup.changes', monthEnd);
  const reader = new UsageReader(prisma);

  const rows: Row[] = [];
  let seeded = 0;
  for (const target of args.appCounts) {
    log(`seeding apps ${seeded}…${target - 1}: ${args.days} days of hours each`);
    for (let start = seeded; start < target; start += 500) {
      const end = Math.min(start + 500, target);
      const ids = Array.from({ length: end - start }, (_, i) => appId(start + i));
      // A publisher every hour of the month, and one ended interval per app.
      await prisma.$executeRaw`
        INSERT INTO "UsageHour" ("appId", meter, dimension, hour, quantity)
        SELECT a, 'participant', d, h, 1800 + (extract(epoch FROM h)::bigint % 1800)
        FROM unnest(${ids}::text[]) a, unnest(ARRAY['publisher']) d,
             generate_series(${monthStart}::timestamptz, ${new Date(monthEnd.getTime() - HOUR_MS)}::timestamptz, interval '1 hour') h`;
      await prisma.$executeRaw`
        INSERT INTO "UsageInterval" (id, "appId", meter, dimension, "startedAt", "endedAt", "changedAt")
        SELECT 'participant:' || a, a, 'participant', 'publisher', ${monthStart}::timestamptz, ${monthEnd}::timestamptz, ${monthStart}::timestamptz
        FROM unnest(${ids}::text[]) a`;
    }
    seeded = target;
    await prisma.$executeRawUnsafe('ANALYZE "UsageHour"');
    await prisma.$executeRawUnsafe('ANALYZE "UsageInterval"');
    const usageHours = Number((await prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM "UsageHour"`)[0]?.n ?? 0);

    const now = new Date(monthEnd.getTime() + 5 * HOUR_MS);
    const measured = appId(0);
    const timings: number[] = [];
    let hoursRead = 0;
    for (let i = 0; i < args.warmUp + args.samples; i++) {
      const started = performance.now();
      const hours = await reader.hourly({ appId: measured }, monthStart, monthEnd, now);
      if (i >= args.warmUp) timings.push(performance.now() - started);
      hoursRead = hours.length;
    }
    log(`${target} apps (${usageHours} hour rows): p50 ${fixed(quantile(timings, 0.5), 2)} ms over ${args.samples} reads`);
    rows.push({
      apps: target,
      usageHours,
      p50Ms: quantile(timings, 0.5) ?? NaN,
      p99Ms: quantile(timings, 0.99) ?? NaN,
      meanMs: mean(timings) ?? NaN,
      hoursRead,
    });
  }

  const baseline = rows[0]!;
  console.log(`## Reading one app's month of usage (${args.days} days, ${args.samples} sequential reads)\n`);
  console.log(
    markdownTable(
      ['apps', 'UsageHour rows', 'rows read', 'p50 ms', 'p99 ms', 'mean ms', 'p50 vs 10 apps'],
      rows.map((r) => [
        r.apps,
        r.usageHours,
        r.hoursRead,
        fixed(r.p50Ms, 2),
        fixed(r.p99Ms, 2),
        fixed(r.meanMs, 2),
        ratio(r.p50Ms, baseline.p50Ms),
      ]),
    ),
  );
  const path = writeResult('metering', { args, rows, baselineApps: baseline.apps });
  log(`wrote ${path}`);
} finally {
  await prisma.$disconnect();
  await postgres.stop();
}
