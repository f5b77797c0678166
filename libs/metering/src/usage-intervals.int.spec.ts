import { createPrismaClient, type PrismaClient } from '@tally/db';
import { createTestDatabase } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { totalsOf } from './meters.js';
import { UsageIntervals } from './usage-intervals.js';
import { UsageReader } from './usage-reader.js';
import { UsageRollup } from './usage-rollup.js';

const at = (hhmmss: string): Date => new Date(`2026-11-02T${hhmmss}Z`);

describe(UsageIntervals.name, () => {
  let prisma: PrismaClient;
  let sut: UsageIntervals;
  let reader: UsageReader;
  const app = 'app_intervals00000001';
  const other = 'app_intervals00000002';

  beforeAll(async () => {
    prisma = createPrismaClient(await createTestDatabase(inject('postgresUrl')));
    sut = new UsageIntervals(prisma);
    reader = new UsageReader(prisma);
  });
  afterAll(() => prisma?.$disconnect());

  const bill = async (appId: string, now: Date) => totalsOf(await reader.hourly({ appId }, at('08:00:00'), at('14:00:00'), now));

  it('keeps one camera connection whatever the order and repetition of its writes, and counts an open one up to now', async () => {
    const cam = { meter: 'camera', connectionId: 'c-1', appId: app, cameraId: 'cam_1' } as const;
    await sut.connection({ ...cam, startedAt: at('10:00:00'), endedAt: at('10:12:30') }, at('10:12:30'));
    await sut.connection({ ...cam, startedAt: at('10:00:00'), endedAt: undefined }, at('10:12:31'));
    await sut.connection({ ...cam, startedAt: at('10:05:00'), endedAt: at('10:20:00') }, at('10:12:32'));
    const viewer = { meter: 'camera_viewer', connectionId: 'v-1', appId: app, cameraId: 'cam_1' } as const;
    await sut.connection({ ...viewer, startedAt: at('10:02:00'), endedAt: undefined }, at('10:02:00'));

    const billed = await bill(app, at('10:32:00'));
    expect(billed.cameraMinutes).toBeCloseTo(12.5, 9);
    expect(billed.cameraViewerMinutes).toBeCloseTo(30, 9);
    // Marked seen, it is still open (the sweep ends it only when marking stops).
    await sut.seen(['camera_viewer:v-1', 'camera:c-1'], at('10:32:00'));
    const row = await prisma.usageInterval.findUniqueOrThrow({ where: { id: 'camera_viewer:v-1' } });
    expect(row).toMatchObject({ endedAt: null, lastSeenAt: at('10:32:00') });
    expect((await prisma.usageInterval.findUniqueOrThrow({ where: { id: 'camera:c-1' } })).lastSeenAt).toBeNull();
  });

  it('adds counts into one row per app and hour that every reader, the roll-up and the totals see as that many', async () => {
    await sut.addCount('hls_bytes', app, at('11:00:00'), 1_000_000, at('11:10:00'));
    await sut.addCount('hls_bytes', app, at('11:00:00'), 234_567, at('11:20:00'));
    await sut.addCount('hls_bytes', app, at('12:00:00'), 42, at('12:00:01'));
    await sut.addCount('hls_bytes', other, at('11:00:00'), 7, at('11:30:00'));

    expect((await bill(app, at('12:30:00'))).hlsBytesServed).toBe(1_234_609);
    const report = await new UsageRollup(prisma).run(at('13:05:00'), 13);
    expect(report.closedThrough).toEqual(at('13:00:00'));
    const hours = await prisma.usageHour.findMany({ where: { appId: app, meter: 'hls_bytes' }, orderBy: { hour: 'asc' } });
    expect(hours.map((h) => [h.hour.toISOString().slice(11, 16), h.quantity])).toEqual([
      ['11:00', 1_234_567],
      ['12:00', 42],
    ]);
    expect((await bill(app, at('13:06:00'))).hlsBytesServed).toBe(1_234_609);
    expect((await bill(other, at('13:06:00'))).hlsBytesServed).toBe(7);

    // A late addition to a rolled-up hour is billed at once and rolled up again.
    await sut.addCount('hls_bytes', app, at('12:00:00'), 8, at('13:07:00'));
    expect((await bill(app, at('13:07:00'))).hlsBytesServed).toBe(1_234_617);
    await new UsageRollup(prisma).run(at('13:08:00'), 13);
    const total = await prisma.usageTotal.findFirst({ where: { appId: app, meter: 'hls_bytes' } });
    expect(total?.quantity).toBe(1_234_617);
  });
});
