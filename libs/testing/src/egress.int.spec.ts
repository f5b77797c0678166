import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DirectFileOutput, EgressClient, EgressStatus, RoomServiceClient, TrackType } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEgress } from './egress.js';
import { startLivekit } from './livekit.js';
import { waitFor } from './ports.js';
import { startRedis } from './redis.js';
import { startStack, TEST_NODE_BUDGET, type TestStack } from './stack.js';
import { mediaNodeIp, toolPath } from './tools.js';

const run = promisify(execFile);
const MEDIA_SECONDS = 60;
const RECORD_MS = 8_000;
/** Rooms deleted as their Track egresses start: of 64 such egresses, stock egress left 1 or 2 listed as ending for good. */
const DELETED_ROOMS = 32;
const ROOMS_AT_ONCE = 4;

type Probe = { streams: { codec_type: string; codec_name: string }[]; format: { duration: string } };

/** The mean loudness of the file's audio in dBFS (-91 is digital silence). */
async function meanVolumeDb(file: string): Promise<number> {
  const { stderr } = await run('ffmpeg', ['-hide_banner', '-i', file, '-vn', '-af', 'volumedetect', '-f', 'null', '-']);
  return Number(/mean_volume: (-?[\d.]+) dB/.exec(stderr)?.[1] ?? Number.NaN);
}

async function ffprobe(file: string): Promise<Probe> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file]);
  return JSON.parse(stdout) as Probe;
}

/** H.264 Annex-B (baseline, headers on every keyframe) and Opus in Ogg (20 ms frames), what `lk room join --publish` reads. */
async function generateMedia(dir: string): Promise<{ video: string; audio: string }> {
  const video = join(dir, 'video.h264');
  const audio = join(dir, 'audio.ogg');
  await run('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=640x360:rate=25:duration=${MEDIA_SECONDS}`],
    ...['-c:v', 'libx264', '-profile:v', 'baseline', '-pix_fmt', 'yuv420p', '-g', '25', '-bf', '0', '-x264-params', 'repeat-headers=1'],
    ...['-f', 'h264', video],
  ]);
  await run('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${MEDIA_SECONDS}`],
    ...['-c:a', 'libopus', '-frame_duration', '20', '-b:a', '64k', audio],
  ]);
  return { video, audio };
}

describe('LiveKit egress in the test stack', () => {
  let stack: TestStack;
  let dir: string;
  let publisher: ChildProcess | undefined;
  const room = `egress-smoke-${process.pid}`;
  let lkArgs: string[];

  const lk = async (...args: string[]) => (await run(toolPath('lk'), [...lkArgs, ...args], { timeout: 30_000 })).stdout;

  beforeAll(async () => {
    stack = await startStack({ egress: true });
    dir = mkdtempSync(join(tmpdir(), 'tally-egress-smoke-'));
    lkArgs = ['--url', stack.livekit.url, '--api-key', stack.livekit.apiKey, '--api-secret', stack.livekit.apiSecret];
    const media = await generateMedia(dir);
    // The server creates no room on join (room.auto_create: false, as installed): create it first.
    await lk('room', 'create', room);
    // `lk room join` publishes the files in real time; it is stopped with SIGINT (it panics at end of file).
    publisher = spawn(
      toolPath('lk'),
      [...lkArgs, 'room', 'join', '--identity', 'camera', '--publish', media.video, '--publish', media.audio, '--fps', '25', room],
      {
        stdio: 'ignore',
      },
    );
  });

  afterAll(async () => {
    if (publisher && publisher.exitCode === null && publisher.signalCode === null) {
      const exited = new Promise((resolve) => publisher!.once('exit', resolve));
      publisher.kill('SIGINT');
      const timer = setTimeout(() => publisher!.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const publishedTracks = () =>
    waitFor(
      'the publisher’s video and audio tracks',
      async () => {
        const rooms = new RoomServiceClient(stack.livekit.url, stack.livekit.apiKey, stack.livekit.apiSecret);
        const tracks = (await rooms.listParticipants(room)).flatMap((p) => p.tracks);
        const video = tracks.find((t) => t.type === TrackType.VIDEO);
        const audio = tracks.find((t) => t.type === TrackType.AUDIO);
        return video && audio ? { video: video.sid, audio: audio.sid } : undefined;
      },
      30_000,
    );

  /** Starts an egress with the CLI, lets it record, stops it and waits until egress has written the file. */
  const record = async (type: 'track-composite' | 'room-composite', request: Record<string, unknown>, file: string) => {
    const requestFile = join(dir, `${type}.json`);
    writeFileSync(requestFile, JSON.stringify({ ...request, file_outputs: [{ filepath: file }] }));
    const started = await lk('egress', 'start', '--type', type, requestFile);
    const egressId = /EG_[A-Za-z0-9]+/.exec(started)?.[0];
    expect(egressId, `lk egress start printed: ${started}`).toBeDefined();
    const egresses = new EgressClient(stack.livekit.url, stack.livekit.apiKey, stack.livekit.apiSecret);
    const status = async () => (await egresses.listEgress({ egressId: egressId! }))[0];
    await waitFor('the egress to record', async () => ((await status())?.status === EgressStatus.EGRESS_ACTIVE ? true : undefined), 30_000);
    await new Promise((resolve) => setTimeout(resolve, RECORD_MS));
    await lk('egress', 'stop', '--id', egressId!);
    const ended = await waitFor(
      'the egress to finish its file',
      async () => {
        const info = await status();
        return info && info.status >= EgressStatus.EGRESS_COMPLETE ? info : undefined;
      },
      60_000,
    );
    expect(ended.error, `egress ended with status ${EgressStatus[ended.status]}`).toBe('');
    expect(ended.status).toBe(EgressStatus.EGRESS_COMPLETE);
    expect(existsSync(file)).toBe(true);
    return ffprobe(file);
  };

  it('lists every Track egress whose room is deleted as it starts as finished, none as ending for good', async () => {
    const rooms = new RoomServiceClient(stack.livekit.url, stack.livekit.apiKey, stack.livekit.apiSecret);
    const egresses = new EgressClient(stack.livekit.url, stack.livekit.apiKey, stack.livekit.apiSecret);
    const media = { video: join(dir, 'video.h264'), audio: join(dir, 'audio.ogg') };
    const started: string[] = [];
    /**
     * An `lk` camera publishing both tracks in `name`, with its track ids. What is tested is egress,
     * not the client: a camera that has not published both within 20 s (a WebRTC join that failed on
     * a busy host) is replaced, twice at most, and the last failure says what lk printed.
     */
    const publishCamera = async (name: string, attempt = 1): Promise<{ camera: ChildProcess; tracks: string[] }> => {
      const camera = spawn(
        toolPath('lk'),
        [...lkArgs, 'room', 'join', '--identity', 'camera', '--publish', media.video, '--publish', media.audio, '--fps', '25', name],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let said = '';
      camera.stderr?.on('data', (chunk: Buffer) => (said = `${said}${chunk.toString()}`.slice(-2_000)));
      try {
        const tracks = await waitFor('the camera’s two tracks', async () => {
          const published = (await rooms.listParticipants(name)).flatMap((p) => p.tracks);
          return published.length === 2 ? published.map((t) => t.sid) : undefined;
        });
        return { camera, tracks };
      } catch (error) {
        camera.kill('SIGKILL');
        if (attempt === 3) throw new Error(`${String(error)} (attempt ${attempt}; lk said: ${said.trim()})`, { cause: error });
        return publishCamera(name, attempt + 1);
      }
    };
    const recordThenDelete = async (name: string) => {
      await rooms.createRoom({ name });
      const { camera, tracks } = await publishCamera(name);
      try {
        const ids = await Promise.all(
          tracks.map(async (sid) => {
            const output = new DirectFileOutput({ filepath: join(dir, `${name}-${sid}.{track_type}`) });
            return (await egresses.startTrackEgress(name, output, sid)).egressId;
          }),
        );
        started.push(...ids);
        await waitFor('both egresses to record', async () => {
          const listed = await egresses.listEgress({ roomName: name });
          return listed.filter((e) => e.status === EgressStatus.EGRESS_ACTIVE).length === 2 ? true : undefined;
        });
        await rooms.deleteRoom(name);
      } finally {
        camera.kill('SIGKILL');
      }
    };
    // A few rooms at once: the race is likelier on a busy egress.
    for (let batch = 0; batch < DELETED_ROOMS / ROOMS_AT_ONCE; batch += 1) {
      await Promise.all(Array.from({ length: ROOMS_AT_ONCE }, (_, i) => recordThenDelete(`${room}-deleted-${batch}-${i}`)));
    }
    const states = async () => {
      const listed = await Promise.all(started.map(async (egressId) => (await egresses.listEgress({ egressId }))[0]));
      return listed.map((e) => (e ? EgressStatus[e.status] : 'unlisted'));
    };
    // A stop racing the pipeline's own end once sent EGRESS_ENDING after EGRESS_COMPLETE, and LiveKit kept the last.
    await waitFor(
      'every egress to be listed as finished',
      async () => ((await states()).every((s) => ['EGRESS_COMPLETE', 'EGRESS_FAILED', 'EGRESS_ABORTED'].includes(s)) ? true : undefined),
      30_000,
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}: ${(await states()).join(', ')}`);
    });
  }, 180_000);

  it('records a publisher’s camera and microphone into an MP4 with a track-composite egress', async () => {
    const tracks = await publishedTracks();
    const file = join(dir, 'track-composite.mp4');

    const probe = await record('track-composite', { room_name: room, video_track_id: tracks.video, audio_track_id: tracks.audio }, file);

    expect(probe.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    const seconds = Number(probe.format.duration);
    expect(seconds).toBeGreaterThan(RECORD_MS / 1_000 - 3);
    expect(seconds).toBeLessThan(RECORD_MS / 1_000 + 15);
    expect(await meanVolumeDb(file)).toBeGreaterThan(-40); // the 440 Hz tone, not silence
  });

  it('records the whole room into an MP4 with a room-composite egress (Chromium)', async () => {
    await publishedTracks();
    const file = join(dir, 'room-composite.mp4');

    const probe = await record('room-composite', { room_name: room, layout: 'grid' }, file);

    expect(probe.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    const seconds = Number(probe.format.duration);
    expect(seconds).toBeGreaterThan(RECORD_MS / 1_000 - 3);
    expect(seconds).toBeLessThan(RECORD_MS / 1_000 + 20);
    expect(await meanVolumeDb(file)).toBeGreaterThan(-40);
  });
});

describe(startEgress.name, () => {
  it('brings egress back when it shuts itself down, as v1.8.6 does after a handler’s internal error', async () => {
    const redis = await startRedis();
    const livekit = await startLivekit({ redisUrl: redis.url, nodeIp: mediaNodeIp() });
    const sut = await startEgress({ livekit, redisUrl: redis.url, budget: TEST_NODE_BUDGET });
    try {
      const before = sut.process.pid;

      // SIGTERM straight to the service (not through stop()): it drains and exits 0 by itself.
      sut.process.kill('SIGTERM');

      await waitFor(
        'egress to be restarted',
        () => Promise.resolve(sut.restarts() === 1 && sut.process.pid !== before ? true : undefined),
        15_000,
      );
      await sut.ready();
      expect((await fetch(sut.healthUrl)).status).toBe(200);
    } finally {
      await sut.stop();
      await livekit.stop();
      await redis.stop();
    }
  });
});
