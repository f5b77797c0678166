import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { type EgressSummary, LivekitEgressClient } from '@tally/livekit';
import { type ApiClient, type Child, startAppProcess, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beepOnsets, flashOnsets, matchOnsets, type SyncReport } from './av-sync.js';
import { type ApiHarness, createStream, createTenant } from './api-harness.js';
import { startApiHarness } from './api-harness.js';
import { type Publisher, tracksUp } from '@tally/testing/media';
import { SignedReceiver } from './signed-receiver.js';
import { download, recordingIn } from './recording-client.js';
import { joinAndPublishSync, type SyncPublisher } from './sync-publisher.js';

const run = promisify(execFile);
/** The gaps between flashes, in turn: unequal, so a track shifted by a whole gap cannot pass for one in sync. */
const GAPS_MS = [1_200, 1_800];
/** A beep belongs to the flash it is nearest to, within half the shortest gap. */
const MATCH_S = Math.min(...GAPS_MS) / 1000;
/**
 * The bound on audio − video for every flash (track-composite's own offset on this host
 * once measured ~100 ms); the target is 45 ms, the detectability threshold of ITU-R BT.1359.
 */
const LIP_SYNC_BOUND_MS = 100;

describe('passthrough recordings: one publisher recorded as sent, joined without transcoding', () => {
  let harness: ApiHarness;
  let worker: Child;
  let receiver: SignedReceiver;
  let egress: LivekitEgressClient;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    harness = await startApiHarness({ TALLY_SWEEP_INTERVAL_S: '5' }, { egress: true });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-passthrough-${Date.now()}.log`));
    receiver = await SignedReceiver.start();
    egress = new LivekitEgressClient(harness.stack.config.livekit);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await receiver?.stop();
    await worker?.stop();
    await harness?.stop();
  });

  async function syncStream(
    codec: 'vp8' | 'h264' = 'vp8',
  ): Promise<{ appId: string; client: ApiClient; stream: StreamView; publisher: SyncPublisher }> {
    const { app, client } = await createTenant(harness.admin, `passthrough-${codec}`);
    await client.patch(`/v1/apps/${app.id}`, { webhookUrl: receiver.url });
    receiver.secret = (await client.post<{ secret: string }>(`/v1/apps/${app.id}/webhook-secret`)).body.secret;
    const stream = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    const publisher = await joinAndPublishSync(token.url, token.token, { gapsMs: GAPS_MS, codec });
    publishers.push(publisher);
    await waitFor(
      'the publisher live',
      async () => ((await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.publishers === 1 ? true : undefined),
      30_000,
    );
    await tracksUp(client, app.id, stream.id);
    return { appId: app.id, client, stream, publisher };
  }

  /**
   * Stops a recording through the API. `recordedS` checks that the recording ended while the stop
   * was in flight, and answers how long it was recorded by the API's own account.
   */
  async function stopRecording(client: ApiClient, appId: string, id: string): Promise<{ recordedS(complete: RecordingView): number }> {
    const askedAt = Date.now();
    expect((await client.post(`/v1/apps/${appId}/recordings/${id}/stop`)).status).toBe(200);
    const answeredAt = Date.now();
    return {
      recordedS(complete) {
        const endedAt = Date.parse(complete.endedAt ?? '');
        expect(endedAt).toBeGreaterThanOrEqual(askedAt);
        expect(endedAt).toBeLessThanOrEqual(answeredAt);
        return (endedAt - Date.parse(complete.startedAt ?? '')) / 1000;
      },
    };
  }

  async function probe(path: string): Promise<{ durationS: number; streams: string[] }> {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_name', '-of', 'json', path]);
    const parsed = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_name: string }[] };
    return { durationS: Number(parsed.format.duration), streams: parsed.streams.map((s) => s.codec_name).sort() };
  }

  /** Seconds of each stream, from its first to its last packet. */
  async function streamDurations(path: string): Promise<{ video: number; audio: number }> {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'packet=codec_type,pts_time', '-of', 'csv=p=0', path], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const span = (type: string) => {
      const times = stdout
        .split('\n')
        .filter((l) => l.startsWith(`${type},`))
        .map((l) => Number(l.split(',')[1]))
        .filter((t) => Number.isFinite(t));
      return times.length > 0 ? Math.max(...times) - Math.min(...times) : 0;
    };
    return { video: span('video'), audio: span('audio') };
  }

  /**
   * ffmpeg decodes every frame of both streams without an error. The null muxer's complaint about
   * two frames landing on the same tick of the frame rate it guesses (egress's H.264 MP4 declares
   * 10000 fps) is about that guess, not the file: egress's own track file draws it too.
   */
  async function decodesCompletely(path: string): Promise<string> {
    const { stderr } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 'null', '-']);
    return stderr
      .split('\n')
      .filter((line) => line.trim() !== '' && !/non monotonically increasing dts to muxer/.test(line))
      .join('\n');
  }

  async function pairOf(room: string): Promise<EgressSummary[]> {
    return (await egress.list({ activeOnly: false, room })).filter((e) => /\.(video|audio)(-\d+)?\.[a-z0-9]+$/.test(e.requestedPath ?? ''));
  }

  it('records a VP8 + Opus publisher into one WebM with both streams, the right length, and every flash matched to its beep', async () => {
    const { appId, client, stream } = await syncStream('vp8');
    const started = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ mode: 'passthrough', location: `${appId}/${started.body.id}.webm` });
    expect(started.body.reason).toMatch(/auto: .* recorded as sent, without transcoding/);
    // Two Track egresses, one per track, behind the one recording.
    expect((await pairOf(stream.room)).length).toBe(2);

    const active = await recordingIn(client, appId, started.body.id, ['active', 'failed']);
    expect(active).toMatchObject({ status: 'active', error: null });
    await new Promise((r) => setTimeout(r, 15_000));
    const stopped = await stopRecording(client, appId, active.id);

    const complete = await recordingIn(client, appId, active.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null, location: `${appId}/${active.id}.webm` });
    const recordedS = stopped.recordedS(complete);
    expect(complete.codecs).toEqual([
      { type: 'video', codec: 'vp8' },
      { type: 'audio', codec: 'opus' },
    ]);
    const file = await download(client, appId, complete);
    const probed = await probe(file);
    expect(probed.streams).toEqual(['opus', 'vp8']);
    // The trailing silence egress appends to the Opus file after a stop is cut.
    expect(Math.abs(probed.durationS - recordedS), `file ${probed.durationS} s, recorded ${recordedS} s`).toBeLessThan(1.5);
    expect(await decodesCompletely(file)).toBe('');

    const sync = matchOnsets(await flashOnsets(file), await beepOnsets(file), MATCH_S);
    console.log(`passthrough lip sync (audio - video, ms): ${sync.offsetsMs.join(', ')}; ${describeSync(sync)}`);

    // The baseline in the same run: the same publisher recorded by track-composite (decoded,
    // re-encoded, its two tracks aligned by the publisher's RTCP sender reports).
    const composite = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
    expect(composite.status).toBe(201);
    await recordingIn(client, appId, composite.body.id, ['active']);
    await new Promise((r) => setTimeout(r, 12_000));
    await client.post(`/v1/apps/${appId}/recordings/${composite.body.id}/stop`);
    const compositeFile = await download(client, appId, await recordingIn(client, appId, composite.body.id, ['complete']));
    const baseline = matchOnsets(await flashOnsets(compositeFile), await beepOnsets(compositeFile), MATCH_S);
    console.log(
      `track-composite lip sync, same publisher (audio - video, ms): ${baseline.offsetsMs.join(', ')}; ${describeSync(baseline)}`,
    );

    // Every flash has its beep, and the sound and the picture of that instant are within the bound
    // in the file: the publisher stamps both on one clock, so any gap is the recording's (a track
    // placed at the wrong start, or shifted, cut or stretched along the way).
    expect(sync.offsetsMs.length).toBeGreaterThanOrEqual(6);
    expect(sync.maxAbsMs, `audio - video per flash: ${sync.offsetsMs.join(', ')} ms`).toBeLessThanOrEqual(LIP_SYNC_BOUND_MS);
    expect(baseline.offsetsMs.length).toBeGreaterThanOrEqual(4);

    // One recording, one stream of app events.
    const events = await waitFor(
      'recording.started and recording.completed',
      () => {
        const got = [...receiver.of('recording.started', complete.id), ...receiver.of('recording.completed', complete.id)];
        return Promise.resolve(got.length >= 2 ? got : undefined);
      },
      30_000,
    );
    expect(events.map((e) => e.body.type)).toEqual(['recording.started', 'recording.completed']);
    expect(events.every((e) => e.signatureValid)).toBe(true);
    // The track files are gone once the joined file is in place.
    expect(readdirSync(join(harness.stack.config.recordings.dir, '.incoming', appId)).filter((f) => f.includes(complete.id))).toEqual([]);
  }, 240_000);

  it('records an H.264 + Opus publisher into one MP4 (H.264 copied, Opus to AAC) that plays to the end', async () => {
    // @livekit/rtc-node encodes H.264 itself (libwebrtc's OpenH264), as a browser asked for
    // `videoCodec: 'h264'` would.
    const { appId, client, stream } = await syncStream('h264');
    const started = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ mode: 'passthrough', location: `${appId}/${started.body.id}.mp4` });
    const active = await recordingIn(client, appId, started.body.id, ['active', 'failed']);
    expect(active).toMatchObject({ status: 'active', error: null });
    await new Promise((r) => setTimeout(r, 12_000));
    const stopped = await stopRecording(client, appId, active.id);

    const complete = await recordingIn(client, appId, active.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null, location: `${appId}/${active.id}.mp4` });
    const recordedS = stopped.recordedS(complete);
    expect(complete.codecs).toEqual([
      { type: 'video', codec: 'h264' },
      { type: 'audio', codec: 'aac' },
    ]);
    const file = await download(client, appId, complete);
    const probed = await probe(file);
    expect(probed.streams).toEqual(['aac', 'h264']);
    expect(Math.abs(probed.durationS - recordedS), `file ${probed.durationS} s, recorded ${recordedS} s`).toBeLessThan(1.5);
    expect(await decodesCompletely(file)).toBe('');
    // Both streams last the whole file: neither track was dropped or cut short by the join.
    const streams = await streamDurations(file);
    expect(streams.video, `video ${streams.video} s of ${probed.durationS} s`).toBeGreaterThan(probed.durationS - 1.5);
    expect(streams.audio, `audio ${streams.audio} s of ${probed.durationS} s`).toBeGreaterThan(probed.durationS - 1.5);

    const sync = matchOnsets(await flashOnsets(file), await beepOnsets(file), MATCH_S);
    // Printed, not asserted: the lip-sync bound is the VP8 test's (the join and the egress patches are
    // the same); a software H.264 encoder on a loaded 2-core host drops frames, so a flash can land
    // one or two frames late, on the next frame kept.
    console.log(`passthrough H.264 lip sync (audio - video, ms): ${sync.offsetsMs.join(', ')}; ${describeSync(sync)}`);
  }, 240_000);

  it('keeps the whole video of an H.264 publisher whose picture size changes mid-recording (as a simulcast layer switch does)', async () => {
    const { appId, client, stream, publisher } = await syncStream('h264');
    const started = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${stream.id}/recordings`, {});
    const active = await recordingIn(client, appId, started.body.id, ['active', 'failed']);
    expect(active).toMatchObject({ status: 'active', mode: 'passthrough' });
    await new Promise((r) => setTimeout(r, 4_000));
    publisher.resize();
    await new Promise((r) => setTimeout(r, 6_000));
    await client.post(`/v1/apps/${appId}/recordings/${active.id}/stop`);

    const complete = await recordingIn(client, appId, active.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null });
    expect(complete.codecs).toEqual([
      { type: 'video', codec: 'h264' },
      { type: 'audio', codec: 'aac' },
    ]);
    const file = await download(client, appId, complete);
    expect(await decodesCompletely(file)).toBe('');
    const { stdout } = await run(
      'ffprobe',
      ['-v', 'error', '-select_streams', 'v', '-show_entries', 'frame=width,height', '-of', 'csv=p=0', file],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const sizes = new Set(stdout.split('\n').filter((l) => l.trim() !== ''));
    expect([...sizes], 'the picture sizes the recording shows').toContain('640,480');
    const probed = await probe(file);
    const streams = await streamDurations(file);
    expect(streams.video, `video ${streams.video} s of ${probed.durationS} s`).toBeGreaterThan(probed.durationS - 1.5);
  }, 240_000);

  /**
   * Records a `codec` publisher with passthrough and SIGKILLs, 8 s in, the process its video egress
   * runs in (the egress service, which runs Track egresses in-process: docs/adr/0048), and
   * waits for the recording to end; asserts it completes saying so, and returns its download and
   * what ffprobe read.
   */
  async function killVideoEgressMidRecording(codec: 'vp8' | 'h264', videoPath: RegExp) {
    const { appId, client, stream } = await syncStream(codec);
    await harness.stack.egress!.ready();
    const started = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${stream.id}/recordings`, { mode: 'passthrough' });
    expect(started.status).toBe(201);
    const active = await recordingIn(client, appId, started.body.id, ['active', 'failed']);
    expect(active.status).toBe('active');
    await new Promise((r) => setTimeout(r, 8_000));

    const video = (await pairOf(stream.room)).find((e) => e.state === 'active' && e.requestedPath?.includes('.video'));
    expect(video?.requestedPath, 'the active video egress').toMatch(videoPath);
    const pid = egressPid(video!.egressId) ?? harness.stack.egress!.process.pid;
    expect(pid, `the egress process recording ${video!.egressId}`).toBeDefined();
    process.kill(pid!, 'SIGKILL');

    // The egress comes back (supervised, as the agent supervises it) and reports the Track egresses
    // its predecessor ran as failed: both tracks were cut at the kill.
    const ended = await recordingIn(client, appId, active.id, ['complete', 'failed']);
    expect(ended.status, ended.error ?? '').toBe('complete');
    expect(ended.error).toMatch(/(video|audio) egress failed: .*keeps what was recorded/);
    const file = await download(client, appId, ended);
    return { appId, recording: ended, file, probed: await probe(file) };
  }

  it('keeps a playable file up to the cut when the video egress is killed mid-recording', async () => {
    const { file, probed } = await killVideoEgressMidRecording('vp8', /\.video(-\d+)?\.webm$/);
    expect(probed.streams).toEqual(['opus', 'vp8']);
    expect(probed.durationS).toBeGreaterThan(5);
    expect(await decodesCompletely(file)).toBe('');
  }, 240_000);

  it('keeps a playable MP4 up to the cut when the H.264 video egress is killed mid-recording', async () => {
    // The H.264 track file is a fragmented MP4 (provisioning's egress patch): a kill loses at most
    // the fragment being written, which the finaliser cuts off, instead of the index of the whole file.
    const { appId, recording, file, probed } = await killVideoEgressMidRecording('h264', /\.video(-\d+)?\.mp4$/);
    expect(recording.location).toBe(`${appId}/${recording.id}.mp4`);
    expect(probed.streams).toEqual(['aac', 'h264']);
    expect(probed.durationS).toBeGreaterThan(5);
    expect(await decodesCompletely(file)).toBe('');
    // The picture lasts up to the cut, less the one fragment (1 s) being written when it came.
    const streams = await streamDurations(file);
    expect(streams.video, `video ${streams.video} s of ${probed.durationS} s`).toBeGreaterThan(4);
    expect(streams.audio, `audio ${streams.audio} s of ${probed.durationS} s`).toBeGreaterThan(4);
  }, 240_000);
});

function describeSync(sync: SyncReport): string {
  return `p50 |offset| ${sync.p50Ms} ms, max ${sync.maxAbsMs} ms, median ${sync.medianMs} ms, ${Math.round(sync.steadyShare(LIP_SYNC_BOUND_MS) * 100)} % within ${LIP_SYNC_BOUND_MS} ms of it`;
}

/** The `egress run-handler` process recording this egress (its request, on the command line, names it), if it has one. */
function egressPid(egressId: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes('run-handler') && cmdline.includes(egressId)) return Number(entry);
    } catch {
      // The process ended while the list was read.
    }
  }
  return undefined;
}
