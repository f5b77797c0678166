import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestingModule } from '@nestjs/testing';
import { Test } from '@nestjs/testing';
import { type Config, loadConfig } from '@tally/config';
import { PrismaService } from '@tally/db';
import { createTestDatabase, dropDatabase, startRedis, type TestRedis, TestRows } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WorkerModule } from '../worker.module.js';
import { RecordingLimits } from './recording-limits.service.js';

const DAY_MS = 86_400_000;

describe(RecordingLimits.name, () => {
  let redis: TestRedis;
  let databaseUrl: string;
  let config: Config;
  let module: TestingModule;
  let prisma: PrismaService;
  let rows: TestRows;
  let sut: RecordingLimits;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase(inject('postgresUrl'));
    redis = await startRedis();
    config = loadConfig({
      TALLY_HOME: mkdtempSync(join(tmpdir(), 'tally-recording-limits-')),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      LIVEKIT_URL: 'http://127.0.0.1:7880',
      LIVEKIT_PUBLIC_URL: 'ws://127.0.0.1:7880',
      LIVEKIT_API_KEY: 'recording-limits-key',
      LIVEKIT_API_SECRET: 'recording-limits-secret-of-at-least-thirty-two-chars',
      TALLY_RECORDINGS_DIR: mkdtempSync(join(tmpdir(), 'tally-recording-limits-files-')),
      TALLY_RECORDING_RETENTION_DAYS: '30',
      TALLY_LOG_LEVEL: 'silent',
    });
    // Compiled, not started: no schedule runs a sweep beside the test's.
    module = await Test.createTestingModule({ imports: [WorkerModule.forRoot(config)] }).compile();
    prisma = module.get(PrismaService, { strict: false });
    rows = new TestRows(prisma);
    sut = module.get(RecordingLimits, { strict: false });
  });
  afterAll(async () => {
    await module?.close();
    await redis?.stop();
    if (databaseUrl) await dropDatabase(inject('postgresUrl'), databaseUrl);
  });

  const newApp = async (recordingRetentionDays: number | null) => {
    const app = await rows.newApp({ name: 'retention', recordingRetentionDays, webhookUrl: 'https://example.com/hooks' });
    const stream = await rows.newStream({ appId: app.id, name: 'show' });
    return { appId: app.id, streamId: stream.id };
  };

  /** A finished recording with its file and ladder on disk, ended `ageMs` before `now`. */
  const recordingEnded = async (
    app: { appId: string; streamId: string },
    now: Date,
    ageMs: number,
    status: 'complete' | 'failed' = 'complete',
  ) => {
    const endedAt = new Date(now.getTime() - ageMs);
    const { id, location } = await rows.newRecording({ ...app, status, sizeBytes: 5n, startedAt: endedAt, endedAt });
    const file = join(config.recordings.dir, location);
    const ladder = join(config.recordings.dir, app.appId, `${id}.ladder`, 'master.m3u8');
    mkdirSync(dirname(ladder), { recursive: true });
    writeFileSync(file, 'media');
    writeFileSync(ladder, '#EXTM3U');
    return { id, file, ladder };
  };

  it('deletes recordings past the app’s retention (files, ladder, row) with recording.deleted, and keeps younger ones', async () => {
    const now = new Date();
    const app = await newApp(1);
    const old = await recordingEnded(app, now, 2 * DAY_MS);
    const oldFailed = await recordingEnded(app, now, 3 * DAY_MS, 'failed');
    const young = await recordingEnded(app, now, DAY_MS / 2);

    const report = await sut.run(now);

    expect(report.recordingsDeleted).toBeGreaterThanOrEqual(2);
    for (const gone of [old, oldFailed]) {
      expect(await prisma.recording.findUnique({ where: { id: gone.id } })).toBeNull();
      expect(existsSync(gone.file)).toBe(false);
      expect(existsSync(gone.ladder)).toBe(false);
    }
    expect(existsSync(young.file)).toBe(true);
    expect(await prisma.recording.findUnique({ where: { id: young.id } })).not.toBeNull();
    const events = await prisma.webhookEvent.findMany({
      where: { appId: app.appId, type: 'recording.deleted' },
      include: { deliveries: true },
    });
    expect(events.map((e) => (e.payload as { data: { id: string } }).data.id).sort()).toEqual([old.id, oldFailed.id].sort());
    expect(events.every((e) => e.deliveries.length === 1)).toBe(true);
  });

  it('follows the operator’s default where the app sets none, and deletes nothing twice', async () => {
    const now = new Date();
    const app = await newApp(null);
    const withinDefault = await recordingEnded(app, now, 29 * DAY_MS);
    const pastDefault = await recordingEnded(app, now, 31 * DAY_MS);

    await sut.run(now);
    const again = await sut.run(now);

    expect(await prisma.recording.findUnique({ where: { id: pastDefault.id } })).toBeNull();
    expect(await prisma.recording.findUnique({ where: { id: withinDefault.id } })).not.toBeNull();
    expect(again.recordingsDeleted).toBe(0);
    expect(await prisma.webhookEvent.count({ where: { appId: app.appId, type: 'recording.deleted' } })).toBe(1);
  });
});
