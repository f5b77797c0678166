import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import { type AppUsageView, type AppView, type LimitRefusal, newId, type RecordingView, type StreamToken } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { type Child, startAppProcess, TestRows, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { download, recordingIn } from './recording-client.js';
import { SignedReceiver } from './signed-receiver.js';

const run = promisify(execFile);
const MB = 1_048_576;
const MAX_DURATION_S = 4;

describe('per-app storage, recording length and retention', () => {
  let harness: ApiHarness;
  let worker: Child;
  let receiver: SignedReceiver;
  let prisma: PrismaClient;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    // A short sweep: the maximum duration and the retention are applied by it.
    harness = await startApiHarness({ TALLY_SWEEP_INTERVAL_S: '2' }, { egress: true });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-storage-${Date.now()}.log`));
    receiver = await SignedReceiver.start();
    prisma = createPrismaClient(harness.stack.config.databaseUrl);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await prisma?.$disconnect();
    await receiver?.stop();
    await worker?.stop();
    await harness?.stop();
  });

  /** A complete recording row holding `sizeBytes`, with a file of that name on disk, as the finaliser leaves one. */
  async function completeRecording(appId: string, streamId: string, sizeBytes: number): Promise<{ id: string; path: string }> {
    const now = new Date();
    const id = newId('rec');
    const { location } = await new TestRows(prisma).newRecording({
      id,
      appId,
      streamId,
      mode: 'track',
      location: `${appId}/${id}.ogg`,
      sizeBytes: BigInt(sizeBytes),
      endReason: 'stopped',
      startedAt: now,
      endedAt: now,
    });
    const path = join(harness.stack.config.recordings.dir, location);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, 'OggS');
    return { id, path };
  }

  it('refuses bad settings with a 400 naming the field, and unknown or other apps’ recordings with a 404', async () => {
    const { app, client } = await createTenant(harness.admin, 'validation');
    const other = await createTenant(harness.admin, 'other');
    const stream = await createStream(client, app.id);
    const { id } = await completeRecording(app.id, stream.id, 10);

    for (const [field, value] of [
      ['maxStorageMb', -1],
      ['maxStorageMb', 1.5],
      ['recordingRetentionDays', 0],
      ['maxRecordingDurationS', 'ten'],
    ] as const) {
      const refused = await harness.admin.patch<{ error: { code: string; message: string } }>(`/v1/apps/${app.id}`, { [field]: value });
      expect(refused.status, `${field}: ${String(value)}`).toBe(400);
      expect(refused.body.error.message).toContain(field);
    }
    const created = await harness.admin.post<{ error: { message: string } }>('/v1/apps', { name: 'a\u0000b', maxStorageMb: 10 });
    expect(created.status).toBe(400);
    expect(created.body.error.message).toContain('name');
    expect((await client.patch(`/v1/apps/${app.id}`, { maxStorageMb: 10 })).status).toBe(403);

    expect((await client.delete(`/v1/apps/${app.id}/recordings/${newId('rec')}`)).status).toBe(404);
    expect((await client.delete(`/v1/apps/${app.id}/recordings/not-an-id`)).status).toBe(400);
    expect((await other.client.delete(`/v1/apps/${other.app.id}/recordings/${id}`)).status).toBe(404);
    expect((await client.get(`/v1/apps/${app.id}/recordings/${id}`)).status).toBe(200);
  });

  it('refuses a recording start once the app holds its storage cap: 429 app.storage in MB, shown in its usage', async () => {
    const created = await harness.admin.post<AppView>('/v1/apps', { name: 'capped', maxStorageMb: 2 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ maxStorageMb: 2, explicitStorage: { maxStorageMb: 2 } });
    const { app, client } = { app: created.body, client: harness.admin };
    const stream = await createStream(client, app.id);
    await completeRecording(app.id, stream.id, 3 * MB);

    const refused = await client.post<LimitRefusal>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
    const usage = await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`);

    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.storage', limit: 2, used: 3, requested: 0 });
    // As every quota refusal: only the app (or retention) frees it, so no Retry-After.
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(usage.body.storage).toMatchObject({ usedBytes: 3 * MB, usedMb: 3, limitMb: 2 });
  });

  it('stops a recording at the app’s maximum duration: complete, endReason max_duration, a playable file; then retention deletes it and tells the app', async () => {
    const { app, client } = await createTenant(harness.admin, 'bounded');
    expect(
      (await harness.admin.patch(`/v1/apps/${app.id}`, { webhookUrl: receiver.url, maxRecordingDurationS: MAX_DURATION_S })).status,
    ).toBe(200);
    receiver.secret = (await client.post<{ secret: string }>(`/v1/apps/${app.id}/webhook-secret`)).body.secret;
    const stream = await createStream(client, app.id);
    // One audio track: a track egress to Ogg, the cheapest recording.
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'radio', role: 'publisher' })
    ).body;
    publishers.push(await joinAndPublish(token.url, token.token, { video: false }));
    await tracksUp(client, app.id, stream.id, [TrackKind.KIND_AUDIO]);

    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    await recordingIn(client, app.id, started.body.id, ['active']);
    const running = await client.delete<{ error: { code: string } }>(`/v1/apps/${app.id}/recordings/${started.body.id}`);
    expect(running.status).toBe(409);

    // Nobody stops it: the publisher keeps sending.
    const complete = await recordingIn(client, app.id, started.body.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', endReason: 'max_duration', error: null });
    expect(complete.durationS ?? 0).toBeGreaterThanOrEqual(MAX_DURATION_S - 1);
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'format=duration',
      '-of',
      'csv=p=0',
      await download(client, app.id, complete),
    ]);
    expect(Number(stdout.trim())).toBeGreaterThan(MAX_DURATION_S - 2);
    const completed = await waitFor(
      'recording.completed at the app',
      () => Promise.resolve(receiver.of('recording.completed', complete.id)[0]),
      30_000,
    );
    expect(completed.body.data).toMatchObject({ id: complete.id, endReason: 'max_duration' });

    // Retention: the recording ended "two days ago", the app keeps one day.
    const path = join(harness.stack.config.recordings.dir, complete.location);
    expect(existsSync(path)).toBe(true);
    await prisma.recording.update({ where: { id: complete.id }, data: { endedAt: new Date(Date.now() - 2 * 86_400_000) } });
    expect((await harness.admin.patch(`/v1/apps/${app.id}`, { recordingRetentionDays: 1 })).status).toBe(200);

    const deleted = await waitFor(
      'recording.deleted at the app',
      () => Promise.resolve(receiver.of('recording.deleted', complete.id)[0]),
      30_000,
    );
    expect(deleted.signatureValid).toBe(true);
    expect(deleted.body.data).toMatchObject({ id: complete.id, status: 'complete' });
    expect((await client.get(`/v1/apps/${app.id}/recordings/${complete.id}`)).status).toBe(404);
    expect(existsSync(path)).toBe(false);
  }, 240_000);

  it('deletes a finished recording through the API: 204, its file gone, recording.deleted sent, then 404', async () => {
    const { app, client } = await createTenant(harness.admin, 'deleter');
    expect((await harness.admin.patch(`/v1/apps/${app.id}`, { webhookUrl: receiver.url })).status).toBe(200);
    receiver.secret = (await client.post<{ secret: string }>(`/v1/apps/${app.id}/webhook-secret`)).body.secret;
    const stream = await createStream(client, app.id);
    const { id, path } = await completeRecording(app.id, stream.id, 4 * MB);

    const first = await client.delete(`/v1/apps/${app.id}/recordings/${id}`);
    const second = await client.delete(`/v1/apps/${app.id}/recordings/${id}`);

    expect(first.status).toBe(204);
    expect(second.status).toBe(404);
    expect(existsSync(path)).toBe(false);
    expect((await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body.storage.usedBytes).toBe(0);
    const event = await waitFor('recording.deleted at the app', () => Promise.resolve(receiver.of('recording.deleted', id)[0]), 30_000);
    expect(event.signatureValid).toBe(true);
  });
});
