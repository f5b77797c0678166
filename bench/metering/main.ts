/**
 * Reading a month of one app's usage (what `GET /v1/apps/{appId}/metering` runs: UsageReader.hourly)
 * in a database where 10 apps, and in another where 10,000 apps, have a month of rolled-up hours
 * each. Every app's UsageHour rows and one ended interval are written straight into Postgres, the
 * roll-up cursors set past them, so the read takes the rolled-up path a month after it ended. The
 * reads alternate between the databases (same process, same moments), so the host's load falls on
 * both alike; the 10-app read is the baseline.
 */
import { performance } from 'node:perf_hooks';
import { createPrismaClient, type PrismaClient, runMigrations } from '@tally/db';
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
type Row = Readonly<{ apps: number; usageHours: number; p50Ms: number; p99Ms: number; meanMs: number; hoursRead: number }>;
type Sample = { apps: number; usageHours: number; reader: UsageReader; timings: number[]; hoursRead: number };
const clients: PrismaClient[] = [];

try {
  const monthEnd = new Date(Math.floor(Date.now() / (24 * HOUR_MS)) * 24 * HOUR_MS);
  const monthStart = new Date(monthEnd.getTime() - args.days * 24 * HOUR_MS);
  const samples: Sample[] = [];
  for (const apps of args.appCounts) {
    const databaseUrl = await createDatabase(postgres.url, `bench_metering_${apps}`);
    await runMigrations(databaseUrl);
    const prisma = createPrismaClient(databaseUrl);
    clients.push(prisma);
    const cursors = new UsageCursors(prisma);
    await cursors.set('rollup.closed', monthEnd);
    await cursors.set('rollup.changes', monthEnd);
    log(`seeding ${apps} apps: ${args.days} days of hours each`);
    for (let start = 0; start < apps; start += 500) {
      const ids = Array.from({ length: Math.min(500, apps - start) }, (_, i) => appId(start + i));
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
    await prisma.$executeRawUnsafe('ANALYZE "UsageHour"');
    await prisma.$executeRawUnsafe('ANALYZE "UsageInterval"');
    const usageHours = Number((await prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM "UsageHour"`)[0]?.n ?? 0);
    samples.push({ apps, usageHours, reader: new UsageReader(prisma), timings: [], hoursRead: 0 });
  }

  const now = new Date(monthEnd.getTime() + 5 * HOUR_MS);
  const measured = appId(0);
  log(`reading app ${measured}'s month ${args.samples} times in each database, alternating`);
  for (let i = 0; i < args.warmUp + args.samples; i++) {
    for (const sample of samples) {
      const started = performance.now();
      const hours = await sample.reader.hourly({ appId: measured }, monthStart, monthEnd, now);
      if (i >= args.warmUp) sample.timings.push(performance.now() - started);
      sample.hoursRead = hours.length;
    }
  }
  const rows: Row[] = samples.map((sample) => ({
    apps: sample.apps,
    usageHours: sample.usageHours,
    p50Ms: quantile(sample.timings, 0.5) ?? NaN,
    p99Ms: quantile(sample.timings, 0.99) ?? NaN,
    meanMs: mean(sample.timings) ?? NaN,
    hoursRead: sample.hoursRead,
  }));

  const baseline = rows[0]!;
  console.log(`## Reading one app's month of usage (${args.days} days, ${args.samples} reads per size, alternating)\n`);
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
  await Promise.all(clients.map((c) => c.$disconnect()));
  await postgres.stop();
}
