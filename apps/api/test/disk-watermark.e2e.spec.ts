import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import { diskWatermarks } from '@tally/capacity';
import type { AppView, RecordingMode, RecordingView, StreamToken } from '@tally/contracts';
import { type Child, startAppProcess, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { download, recordingIn } from './recording-client.js';
import { SignedReceiver } from './signed-receiver.js';
import { mountSmallDisk, reportedClear, type SmallDisk, watermarkChecks, type WatermarkChecks } from './small-disk.js';

const run = promisify(execFile);
const MB = 1024 * 1024;
/** Small enough to fill in a moment; egress, the API and the worker all see it (one mount namespace). */
const SIZE = 64 * MB;

/**
 * A live publisher recorded onto a small tmpfs that another process fills: just above the stop
 * watermark the recording goes on; past it the recording ends `complete` with `endReason:
 * "disk_full"`, and what was recorded until then downloads and plays.
 */
describe('recordings at the disk watermark', () => {
  let disk: SmallDisk;
  let harness: ApiHarness;
  let worker: Child;
  let receiver: SignedReceiver;
  let checks: WatermarkChecks;
  const publishers: Publisher[] = [];
  const workerLog = join(tmpdir(), `tally-worker-disk-${Date.now()}.log`);

  beforeAll(async () => {
    disk = mountSmallDisk(SIZE);
    // A 4 MB stop watermark: the track-composite MP4 is written at ~0.4 MB/s, which the 2 MB default
    // on this small a filesystem would leave a check and a stop only a few seconds of (ADR 0022).
    // A 10 s admission horizon: at the default 2 minutes a track-composite reserves ~44 MB, more than
    // this filesystem admits once the first test's recording holds its place (disk-admission.e2e
    // covers that refusal).
    harness = await startApiHarness(
      {
        TALLY_RECORDINGS_DIR: disk.dir,
        TALLY_DISK_STOP_FREE_MIN_MB: '4',
        TALLY_DISK_RESERVE_MAX_MB: '256',
        TALLY_DISK_HORIZON_S: '10',
      },
      { egress: true },
    );
    worker = await startAppProcess('worker', harness.stack.env, workerLog);
    receiver = await SignedReceiver.start();
    checks = watermarkChecks(harness.stack.redis.url);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await checks?.close();
    await receiver?.stop();
    await worker?.stop();
    await harness?.stop();
    disk?.unmount();
  });

  async function recordUntilDiskFull(mode: RecordingMode, options: { restartWorker?: boolean; audioOnly?: boolean } = {}): Promise<void> {
    const { app, client } = await createTenant(harness.admin, `disk-${mode}`);
    expect((await client.patch<AppView>(`/v1/apps/${app.id}`, { webhookUrl: receiver.url })).status).toBe(200);
    receiver.secret = (await client.post<{ secret: string }>(`/v1/apps/${app.id}/webhook-secret`)).body.secret;
    const stream = await createStream(client, app.id);
    const token = (await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'cam', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token, { video: !options.audioOnly }));
    await tracksUp(client, app.id, stream.id, options.audioOnly ? [TrackKind.KIND_AUDIO] : undefined);
    // The disk the test before filled is free again once the agent has measured it.
    await reportedClear(harness.admin);
    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const active = await recordingIn(client, app.id, started.body.id, ['active']);
    await new Promise((r) => setTimeout(r, 6_000));

    // Just above the stop watermark (with room for the join of what is recorded): it goes on recording.
    const marks = diskWatermarks(disk.totalBytes(), harness.stack.config.disk.watermarks);
    await disk.fillLeaving(marks.stopFreeBytes + disk.pendingOf(active) + 4 * MB);
    const above = await checks.after(Date.now());
    expect(above.levels.recordings).not.toBe('stop');
    expect((await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${active.id}`)).body).toMatchObject({
      status: 'active',
      endReason: null,
    });

    // Past it, a MB below: the recording is stopped and what it holds is kept.
    const fullAt = Date.now();
    await disk.fillLeaving(marks.stopFreeBytes - 1 * MB);
    const recordedS = (fullAt - Date.parse(active.startedAt ?? '')) / 1000;
    if (options.restartWorker) {
      // The worker dies as soon as it has decided the stop; a new one carries it out.
      await waitFor(
        'the disk stop to be noted',
        async () => ((await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${active.id}`)).body.endReason ? true : undefined),
        30_000,
      );
      await worker.stop('SIGKILL');
      worker = await startAppProcess('worker', harness.stack.env, workerLog);
    }

    const complete = await recordingIn(client, app.id, active.id, ['complete', 'failed'], 180_000);
    expect(complete).toMatchObject({ status: 'complete', endReason: 'disk_full', mode });
    // It recorded until the check after the fill stopped it: a few seconds at most after the fill.
    expect(complete.durationS ?? 0).toBeGreaterThan(recordedS - 2);
    expect(complete.durationS ?? 0).toBeLessThan(recordedS + 8);

    const file = await download(client, app.id, complete);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', file]);
    const probed = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_type: string }[] };
    expect(probed.streams.map((s) => s.codec_type).sort()).toEqual(options.audioOnly ? ['audio'] : ['audio', 'video']);
    expect(Number(probed.format.duration)).toBeGreaterThan(recordedS - 2);
    rmSync(file);

    const completed = await waitFor(
      'recording.completed at the app',
      () => Promise.resolve(receiver.of('recording.completed', complete.id)[0]),
      30_000,
    );
    expect(completed.signatureValid).toBe(true);
    expect(completed.body.data).toMatchObject({ id: complete.id, status: 'complete', endReason: 'disk_full' });

    await publishers.pop()?.stop();
    disk.emptyFillers();
  }

  it('stops a passthrough recording before the disk is full and keeps what it recorded, across a worker killed while stopping', async () => {
    await recordUntilDiskFull('passthrough', { restartWorker: true });
  }, 300_000);

  it('stops a track-composite recording the same way', async () => {
    await recordUntilDiskFull('track_composite');
  }, 300_000);

  it('stops an audio-only publisher’s track recording the same way: complete, the disk as its reason, the Ogg file plays', async () => {
    await recordUntilDiskFull('track', { audioOnly: true });
  }, 300_000);
});
