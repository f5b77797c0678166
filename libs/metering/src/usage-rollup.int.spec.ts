import { createPrismaClient, type PrismaClient } from '@tally/db';
import { createTestDatabase } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { totalsOf } from './meters.js';
import { UsageIntervals } from './usage-intervals.js';
import { UsageReader } from './usage-reader.js';
import { UsageRollup } from './usage-rollup.js';

const at = (hhmm: string): Date => new Date(`2026-11-01T${hhmm}:00Z`);

describe(UsageRollup.name, () => {
  let prisma: PrismaClient;
  let sut: UsageRollup;
  let reader: UsageReader;
  let intervals: UsageIntervals;
  const app = 'app_rollup0000000001';
  const other = 'app_rollup0000000002';

  beforeAll(async () => {
    prisma = createPrismaClient(await createTestDatabase(inject('postgresUrl')));
    sut = new UsageRollup(prisma);
    reader = new UsageReader(prisma);
    intervals = new UsageIntervals(prisma);
    await prisma.usageInterval.createMany({
      data: [
        { id: 'recording:r1', appId: app, meter: 'recording', dimension: 'passthrough', startedAt: at('11:30'), changedAt: at('11:30') },
        { id: 'storage:r0', appId: other, meter: 'storage', weight: 2e9, startedAt: at('09:00'), changedAt: at('09:00') },
      ],
    });
    // The leave before the join, both twice: one interval, 10:50 – 11:15.
    const host = { appId: app, sid: 'PA_1', room: `${app}.str_1`, role: 'publisher' } as const;
    await intervals.participant({ ...host, joinedAt: at('10:50'), leftAt: at('11:15') }, at('11:15'));
    await intervals.participant({ ...host, joinedAt: at('10:50'), leftAt: undefined }, at('11:16'));
    await intervals.participant({ ...host, joinedAt: at('10:50'), leftAt: at('11:25') }, at('11:17'));
  });
  afterAll(() => prisma?.$disconnect());

  const bill = async (appId: string, now: Date) => totalsOf(await reader.hourly({ appId }, at('08:00'), at('14:00'), now));

  it('rolls closed hours up to what the intervals say, and reads the open hour live up to now', async () => {
    const report = await sut.run(at('12:20'), 13);

    expect(report.closedThrough).toEqual(at('12:00'));
    const hours = await prisma.usageHour.findMany({ where: { appId: app }, orderBy: [{ hour: 'asc' }, { meter: 'asc' }] });
    expect(hours.map((h) => [h.hour.toISOString().slice(11, 16), h.meter, h.quantity])).toEqual([
      ['10:00', 'participant', 600],
      ['11:00', 'participant', 900],
      ['11:00', 'recording', 1800],
    ]);
    const billed = await bill(app, at('12:20'));
    expect(billed.publisherMinutes).toBeCloseTo(25, 9);
    expect(billed.recordingMinutes.passthrough).toBeCloseTo(50, 9);
    expect((await bill(other, at('12:20'))).storageGbHours).toBeCloseTo(2 * (200 / 60), 9);
  });

  it('bills a late end at once, and rolls the hours it changed up again to the same figures', async () => {
    await prisma.usageInterval.update({ where: { id: 'recording:r1' }, data: { endedAt: at('11:45'), changedAt: at('12:25') } });

    expect((await bill(app, at('12:26'))).recordingMinutes.passthrough).toBeCloseTo(15, 9);
    const report = await sut.run(at('12:26'), 13);
    expect(report.recomputedApps).toBe(1);
    expect((await prisma.usageHour.findFirst({ where: { appId: app, meter: 'recording' } }))?.quantity).toBe(900);
    const again = await sut.run(at('12:27'), 13);
    expect(again.recomputedApps).toBe(0);
    expect((await bill(app, at('12:27'))).recordingMinutes.passthrough).toBeCloseTo(15, 9);
    // The counters' totals followed the recomputed hour: 15 minutes of recording, not 30 + 15.
    const totals = await prisma.usageTotal.findMany({ where: { appId: app }, orderBy: { meter: 'asc' } });
    expect(totals.map((t) => [t.meter, t.quantity])).toEqual([
      ['participant', 1500],
      ['recording', 900],
    ]);
    const since = totalsOf((await reader.totalsSinceStart(at('12:30'))).filter((q) => q.appId === app));
    expect(since.recordingMinutes.passthrough).toBeCloseTo(15, 9);
    expect(since.publisherMinutes).toBeCloseTo(25, 9);
  });

  it('deletes hours and ended intervals older than the retention', async () => {
    const report = await sut.run(new Date('2027-12-15T00:00:00Z'), 13);

    expect(report.deletedHours).toBeGreaterThan(0);
    // Counters never drop: the totals keep what retention deleted from the hours.
    expect((await prisma.usageTotal.findFirst({ where: { appId: app, meter: 'recording' } }))?.quantity).toBe(900);
    expect(await prisma.usageHour.count({ where: { hour: { lt: new Date('2026-11-15T00:00:00Z') } } })).toBe(0);
    expect(await prisma.usageInterval.findUnique({ where: { id: 'recording:r1' } })).toBeNull();
    // A file still stored keeps its interval (and keeps counting).
    expect(await prisma.usageInterval.findUnique({ where: { id: 'storage:r0' } })).not.toBeNull();
  });
});
