import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { newId } from '@tally/contracts';
import type { RecordingStatus } from '@tally/db';
import { TestRows } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MediumApi, startMediumApi } from '../../test/medium/medium-harness.js';
import { DomainError, LimitRefusedError, NotFoundError } from '../common/domain-error.js';
import { CapacityService } from '../capacity/capacity.service.js';
import { RecordingDeletion } from '../recordings/recording-deletion.service.js';
import { RecordingStorage } from '../recordings/recording-storage.js';
import { RecordingsService } from '../recordings/recordings.service.js';
import { StreamsService } from '../streams/streams.service.js';
import { AppsService } from './apps.service.js';
import { StorageRepository } from '../tenancy/storage.repository.js';

const MB = 1_048_576;
const admin = { kind: 'admin' } as const;

describe(StorageRepository.name, () => {
  let api: MediumApi;
  let sut: StorageRepository;

  beforeAll(async () => {
    api = await startMediumApi({ TALLY_RECORDING_RETENTION_DAYS: '30' });
    sut = api.get(StorageRepository);
  });
  afterAll(() => api?.stop());

  const newApp = async (settings: { maxStorageMb?: number } = {}) => {
    const app = await api.get(AppsService).create({ name: 'storage', ...settings });
    const stream = await api.get(StreamsService).create(app.id, { name: 'show' });
    return { appId: app.id, stream };
  };

  /** A recording row as the finaliser leaves it, with its file on disk when `file` is set. */
  const seedRecording = async (
    appId: string,
    streamId: string,
    row: { status: RecordingStatus; sizeBytes?: number; durationS?: number; ladderKbps?: number[] },
    file = false,
  ) => {
    const { id, location } = await new TestRows(api.prisma).newRecording({
      appId,
      streamId,
      status: row.status,
      nodeId: api.nodeId,
      sizeBytes: row.sizeBytes === undefined ? null : BigInt(row.sizeBytes),
      durationS: row.durationS ?? null,
      endedAt: new Date(),
      ...(row.ladderKbps
        ? {
            ladderStatus: 'ready' as const,
            ladderRenditions: row.ladderKbps.map((bitrateKbps, i) => ({ name: `r${i}`, width: 640, height: 360, bitrateKbps })),
          }
        : {}),
    });
    if (file) {
      const path = join(api.get(RecordingStorage).files.dir, location);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, 'media');
      return { id, path };
    }
    return { id, path: '' };
  };

  it('sums the app’s complete recordings and their ladders, not running or failed ones, nor other apps’', async () => {
    const { appId, stream } = await newApp();
    const other = await newApp();
    await seedRecording(appId, stream.id, { status: 'complete', sizeBytes: 3 * MB });
    await seedRecording(appId, stream.id, { status: 'complete', sizeBytes: 1 * MB, durationS: 8, ladderKbps: [1_000, 500] });
    await seedRecording(appId, stream.id, { status: 'failed', sizeBytes: 50 * MB });
    await seedRecording(appId, stream.id, { status: 'ending', sizeBytes: 50 * MB });
    await seedRecording(other.appId, other.stream.id, { status: 'complete', sizeBytes: 70 * MB });

    expect(await sut.bytesHeld(appId)).toBe(4 * MB + 1_500 * 125 * 8);
    expect(await sut.bytesHeld(newId('app'))).toBe(0);
  });

  it('shows storage used, cap and retention in the app’s usage', async () => {
    const { appId, stream } = await newApp({ maxStorageMb: 10 });
    await seedRecording(appId, stream.id, { status: 'complete', sizeBytes: 2 * MB });

    const usage = await api.get(CapacityService).usage(appId);

    expect(usage.storage).toEqual({
      usedBytes: 2 * MB,
      usedMb: 2,
      limitMb: 10,
      recordingRetentionDays: 30,
      maxRecordingDurationS: null,
    });
  });

  it('refuses a recording start once the app holds its cap, naming app.storage in MB, and admits one below it', async () => {
    const { appId, stream } = await newApp({ maxStorageMb: 5 });
    api.livekit.publish(stream.room);
    await seedRecording(appId, stream.id, { status: 'complete', sizeBytes: 5 * MB - 1 });
    const recordings = api.get(RecordingsService);

    const admitted = await recordings.start(appId, stream.id, { mode: 'auto' });
    await seedRecording(appId, stream.id, { status: 'complete', sizeBytes: 1 });
    const refused = await recordings.start(appId, stream.id, { mode: 'auto' }).catch((e: unknown) => e);

    expect(admitted.status).toBe('starting');
    expect(refused).toBeInstanceOf(LimitRefusedError);
    expect(refused).toMatchObject({ code: 'quota_exceeded', limit: { resource: 'app.storage', limit: 5, used: 5, requested: 0 } });
    expect((refused as LimitRefusedError).limit.retryAfterS).toBeUndefined();
  });

  it('returns a cap to the operator’s default when PATCHed to null', async () => {
    const { appId } = await newApp({ maxStorageMb: 5 });

    const cleared = await api.get(AppsService).update(appId, { maxStorageMb: null, recordingRetentionDays: 2 }, admin);

    expect(cleared).toMatchObject({ maxStorageMb: null, recordingRetentionDays: 2, explicitStorage: { recordingRetentionDays: 2 } });
  });

  describe(RecordingDeletion.name, () => {
    it('deletes a complete recording’s file and row, and stages recording.deleted', async () => {
      const { appId, stream } = await newApp();
      const { id, path } = await seedRecording(appId, stream.id, { status: 'complete', sizeBytes: 5 }, true);

      await api.get(RecordingDeletion).delete(appId, id);
      const again = await api
        .get(RecordingDeletion)
        .delete(appId, id)
        .catch((e: unknown) => e);

      expect(existsSync(path)).toBe(false);
      expect(await api.prisma.recording.findUnique({ where: { id } })).toBeNull();
      const events = await api.prisma.webhookEvent.findMany({ where: { appId, type: 'recording.deleted' } });
      expect(events.map((e) => (e.payload as { data: { id: string } }).data.id)).toEqual([id]);
      expect(again).toBeInstanceOf(NotFoundError);
    });

    it('refuses to delete a running recording (409) and does not find another app’s (404)', async () => {
      const { appId, stream } = await newApp();
      const other = await newApp();
      const { id } = await seedRecording(appId, stream.id, { status: 'active' });

      const running = await api
        .get(RecordingDeletion)
        .delete(appId, id)
        .catch((e: unknown) => e);
      const foreign = await api
        .get(RecordingDeletion)
        .delete(other.appId, id)
        .catch((e: unknown) => e);

      expect(running).toBeInstanceOf(DomainError);
      expect(running).toMatchObject({ code: 'conflict' });
      expect(foreign).toBeInstanceOf(NotFoundError);
      expect(await api.prisma.recording.findUnique({ where: { id } })).not.toBeNull();
    });
  });
});
