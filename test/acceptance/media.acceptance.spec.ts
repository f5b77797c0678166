import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ParticipantInfo_Kind } from '@livekit/protocol';
import { dispose, TrackKind } from '@livekit/rtc-node';
import type {
  AppMeteringView,
  AppView,
  LimitRefusal,
  NodeList,
  RecordingView,
  StreamView,
  WebhookSecretView,
  WorkerList,
} from '@tally/contracts';
import { acceptsTcp, tcpListenersOfGroup, waitFor } from '@tally/testing';
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstVideoFrame,
  joinAndPublish,
  joinAsViewer,
  type Publisher,
  tracksUp,
  tryPublishVideo,
  type Viewer,
} from '@tally/testing/media';
import { SignedReceiver } from '../../apps/api/test/signed-receiver.js';
import { joinAndPublishSync, type SyncPublisher } from '../../apps/api/test/sync-publisher.js';
import {
  createStream,
  createTenant,
  decodes,
  frames,
  type Installed,
  installed,
  packetSpanS,
  probe,
  streamLive,
  streamToken,
  type Tenant,
} from './installed.js';

const RECORD_MS = 8_000;

/** The installed node's LiveKit room API, with the credentials install.sh wrote (as an operator would use them). */
const roomsOf = (node: Installed) =>
  new RoomServiceClient(
    node.env['LIVEKIT_URL'] ?? 'http://127.0.0.1:7880',
    node.env['LIVEKIT_API_KEY'] ?? '',
    node.env['LIVEKIT_API_SECRET'] ?? '',
  );

describe('an installed node: live streams, recordings and signed webhooks', () => {
  let node: Installed;
  let tenant: Tenant;
  let receiver: SignedReceiver;
  const publishers: Publisher[] = [];
  const viewers: Viewer[] = [];

  beforeAll(async () => {
    node = installed();
    receiver = await SignedReceiver.start();
    tenant = await createTenant(node.admin, 'acceptance media');
    // The app's webhooks go to a receiver that verifies each signature with the app's secret.
    const rotated = await tenant.client.post<WebhookSecretView>(`/v1/apps/${tenant.app.id}/webhook-secret`);
    expect(rotated.status).toBe(201);
    receiver.secret = rotated.body.secret;
    expect((await tenant.client.patch<AppView>(`/v1/apps/${tenant.app.id}`, { webhookUrl: receiver.url })).status).toBe(200);
  });

  afterAll(async () => {
    await Promise.all([...publishers.map((p) => p.stop()), ...viewers.map((v) => v.room.disconnect().catch(() => undefined))]);
    if (tenant) await node.admin.delete(`/v1/apps/${tenant.app.id}`);
    await receiver?.stop();
    await dispose();
  });

  it('a real publisher with a Tally token makes the stream live; a viewer sees it and cannot publish', async () => {
    const stream = await createStream(tenant, 'launch');
    expect(stream.status).toBe('created');
    const publisher = await streamToken(tenant, stream.id, 'publisher', 'host');
    expect(publisher.url).toBe(node.env['LIVEKIT_PUBLIC_URL']);
    publishers.push(await joinAndPublish(publisher.url, publisher.token));
    const live = await streamLive(tenant, stream.id);
    expect(live.startedAt).not.toBeNull();

    const viewerToken = await streamToken(tenant, stream.id, 'viewer', 'fan-1');
    const viewer = await joinAsViewer(viewerToken.url, viewerToken.token);
    viewers.push(viewer);
    const video = (await viewer.tracks).find((t) => t.kind === TrackKind.KIND_VIDEO)!;
    expect(await firstVideoFrame(video)).toEqual({ width: 320, height: 240 });
    await expect(tryPublishVideo(viewer.room)).rejects.toThrow();

    const liveEvent = await waitFor(
      'a signed stream.live webhook',
      () => Promise.resolve(receiver.of('stream.live', stream.id)[0]),
      30_000,
    );
    expect(liveEvent.signatureValid).toBe(true);
  });

  it("meters a real publisher's minutes within 2 % of this test's clock, in JSON and as CSV", async () => {
    // An app of its own: the other tests' publishers and recorders are not in its bill.
    const metered = await createTenant(node.admin, 'acceptance metering');
    try {
      const stream = await createStream(metered, 'metered');
      const token = await streamToken(metered, stream.id, 'publisher', 'metered-host');
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
      const path = `/v1/apps/${metered.app.id}/metering?from=${new Date(hour).toISOString()}&to=${new Date(hour + 2 * 3_600_000).toISOString()}&granularity=hour`;
      const joined = Date.now();
      const publisher = await joinAndPublish(token.url, token.token);
      await streamLive(metered, stream.id);
      await sleep(Math.max(0, joined + 30_000 - Date.now()));
      const left = Date.now();
      await publisher.stop();

      // The leave webhook may follow the room emptying; until it comes the open interval counts up to each read.
      let previous = -1;
      const billed = await waitFor(
        'the leave to be metered',
        async () => {
          const usage = (await metered.client.get<AppMeteringView>(path)).body;
          const settled = usage.publisherMinutes > 0 && usage.publisherMinutes === previous;
          previous = usage.publisherMinutes;
          return settled ? usage : undefined;
        },
        60_000,
      );
      const clock = (left - joined) / 60_000;
      expect(Math.abs(billed.publisherMinutes - clock), `${billed.publisherMinutes} vs ${clock} minutes`).toBeLessThanOrEqual(clock * 0.02);
      expect(billed.participantMinutes).toBeCloseTo(billed.publisherMinutes, 9);

      const csv = await metered.client.raw(path, { accept: 'text/csv' });
      expect(csv.headers.get('content-type')).toContain('text/csv');
      const [header, ...rows] = (await csv.text()).trim().split('\n');
      const column = header!.split(',').indexOf('publisher_minutes');
      expect(column).toBeGreaterThan(0);
      expect(rows.every((r) => r.startsWith(`${metered.app.id},`))).toBe(true);
      expect(rows.map((r) => Number(r.split(',')[column])).reduce((a, b) => a + b, 0)).toBeCloseTo(billed.publisherMinutes, 4);
    } finally {
      await node.admin.delete(`/v1/apps/${metered.app.id}`);
    }
  });

  /**
   * `publishers` publishers join (`publish`, else a VP8 camera or a microphone), the recording
   * (`mode` left to auto) runs for RECORD_MS, stops, and the completed file is downloaded and
   * checked: what it reports is what it holds, every track spans the recorded time, and it decodes.
   */
  async function record(
    name: string,
    options: {
      video?: boolean;
      publishers?: number;
      on?: Tenant;
      publish?: (url: string, token: string) => Promise<Publisher>;
      whileRecording?: (stream: StreamView) => Promise<void>;
    } = {},
  ) {
    const app = options.on ?? tenant;
    const stream = await createStream(app, name);
    const count = options.publishers ?? 1;
    for (let i = 0; i < count; i++) {
      const token = await streamToken(app, stream.id, 'publisher', `speaker-${i}`);
      publishers.push(
        await (options.publish?.(token.url, token.token) ?? joinAndPublish(token.url, token.token, { video: options.video ?? true })),
      );
    }
    await streamLive(app, stream.id, count);
    if (count === 1) await tracksUp(app.client, app.app.id, stream.id, options.video === false ? [TrackKind.KIND_AUDIO] : undefined);
    const requestedAt = Date.now();
    const started = await waitFor(
      'the recording to be accepted (LiveKit lists the tracks a moment after the join)',
      async () => {
        const r = await app.client.post<RecordingView>(`/v1/apps/${app.app.id}/streams/${stream.id}/recordings`, {});
        return r.status === 409 ? undefined : r;
      },
      20_000,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const path = `/v1/apps/${app.app.id}/recordings/${started.body.id}`;
    await waitFor(
      'the recording to be active',
      async () => ((await app.client.get<RecordingView>(path)).body.status === 'active' ? true : undefined),
      90_000,
    );
    const recordedUntil = Date.now() + RECORD_MS;
    await options.whileRecording?.(stream);
    await new Promise((r) => setTimeout(r, Math.max(0, recordedUntil - Date.now())));
    expect((await app.client.post(`${path}/stop`)).status).toBeLessThan(300);
    // The file spans from egress's start (after the request) to the stop (before its answer).
    const spanS = (Date.now() - requestedAt) / 1000;
    const done = await waitFor(
      'the recording to complete',
      async () => {
        const r = (await app.client.get<RecordingView>(path)).body;
        return r.status === 'complete' || r.status === 'failed' ? r : undefined;
      },
      120_000,
    );
    expect(done).toMatchObject({ status: 'complete', error: null });
    const download = await app.client.raw(`${path}/file`);
    expect(download.status).toBe(200);
    const file = join(tmpdir(), `acceptance-${done.id}.${done.location.split('.').pop() ?? 'mp4'}`);
    writeFileSync(file, Buffer.from(await download.arrayBuffer()));
    const media = await probe(file);
    // What the recording reports is what the file holds, and each track holds the recorded span.
    expect(Math.abs(media.durationS - (done.durationS ?? 0))).toBeLessThan(1);
    for (const type of media.streams as ('audio' | 'video')[]) {
      expect(await packetSpanS(file, type), `${type} span`).toBeGreaterThan(RECORD_MS / 1000 - 1);
    }
    if (media.streams.includes('video')) expect(await packetSpanS(file, 'video'), 'video span').toBeLessThan(spanS + 1);
    await decodes(file);
    return { started: started.body, done, file, media, size: Number(download.headers.get('content-length')) };
  }

  it('records a camera publisher as sent (auto: passthrough); the recorders are not counted in the stream; the download plays with video and audio; webhooks arrive signed', async () => {
    const { started, done, media, size } = await record('recorded', { whileRecording: recordersNotCounted });
    expect(started.mode).toBe('passthrough');
    expect(media.streams).toEqual(['audio', 'video']);
    for (const type of ['recording.started', 'recording.completed']) {
      const event = await waitFor(`a signed ${type} webhook`, () => Promise.resolve(receiver.of(type, done.id)[0]), 60_000);
      expect(event.signatureValid, type).toBe(true);
    }
    const completed = receiver.of('recording.completed', done.id)[0]!.body.data as RecordingView;
    expect(completed.sizeBytes).toBe(size);
  });

  /**
   * The egresses recording the stream are in its LiveKit room, yet the stream counts its people only.
   * Tally reads the counts back from LiveKit on each room event, and LiveKit sends one room's events
   * in order: so once a guest who starts publishing after the recorders joined is counted among the
   * publishers, the participant count beside it was read with the recorders in the room.
   */
  async function recordersNotCounted(stream: StreamView): Promise<void> {
    const livekit = roomsOf(node);
    await waitFor('the egress recorders in the room', async () =>
      (await livekit.listParticipants(stream.room)).some((p) => p.kind === ParticipantInfo_Kind.EGRESS) ? true : undefined,
    );
    const token = await streamToken(tenant, stream.id, 'publisher', 'guest');
    const guest = await joinAndPublish(token.url, token.token, { video: false });
    try {
      // The host and the guest; not the recorders.
      expect(await streamLive(tenant, stream.id, 2)).toMatchObject({ participants: 2, publishers: 2 });
    } finally {
      await guest.stop();
    }
  }

  it('records an H.264 camera whose picture size changes mid-recording (as a simulcast layer switch does) as sent, video and audio to the end, at both sizes', async () => {
    let camera: SyncPublisher | undefined;
    const { started, done, file, media } = await record('resized', {
      publish: async (url, token) => (camera = await joinAndPublishSync(url, token, { codec: 'h264' })),
      whileRecording: async () => {
        await new Promise((r) => setTimeout(r, RECORD_MS / 2));
        camera!.resize();
      },
    });
    expect(started.mode).toBe('passthrough');
    expect(done.location.endsWith('.mp4')).toBe(true);
    expect(media.codecs).toEqual(['aac', 'h264']);
    // The picture before the change and after it: 640×480, or on a loaded host less where
    // libwebrtc's adaptation scales it down, but larger than before. The larger picture holds to the end.
    const shown = await frames(file);
    const area = (f: { width: number; height: number }) => f.width * f.height;
    const before = 320 * 240;
    expect(shown.map((f) => `${f.width}x${f.height}`)).toContain('320x240');
    expect(area(shown.at(-1)!), `the last frame (${JSON.stringify(shown.at(-1))}) is larger than 320x240`).toBeGreaterThan(before);
    // The video lasts the whole file: the switch did not drop it (stock mp4mux lost all of it).
    expect(await packetSpanS(file, 'video'), `video span of ${media.durationS} s`).toBeGreaterThan(media.durationS - 1.5);
  });

  it('records an audio-only publisher as a single track egress that plays; egress exposes no status port, and a file swapped for a link to a secret is not served', async () => {
    const { started, done, media } = await record('podcast', { video: false, whileRecording: egressListensOnLoopbackOnly });
    expect(started.mode).toBe('track');
    expect(media.streams).toEqual(['audio']);

    // Whoever writes the recordings directory (the media user, a joined node) replaces the file.
    const path = join(node.env['TALLY_RECORDINGS_DIR'] ?? join(node.home, 'recordings'), done.location);
    const url = `/v1/apps/${tenant.app.id}/recordings/${done.id}/file`;
    unlinkSync(path);
    symlinkSync(join(node.home, 'admin.key'), path);
    const linked = await tenant.client.raw(url);
    expect(linked.status).toBe(404);
    expect(await linked.text()).not.toContain(readFileSync(join(node.home, 'admin.key'), 'utf8').trim());
    unlinkSync(path);
    execFileSync('mkfifo', [path]);
    expect((await tenant.client.raw(url)).status).toBe(404);
  });

  /** While egress records, it and its handlers listen on loopback only; the node's media address answers no status request. */
  async function egressListensOnLoopbackOnly(): Promise<void> {
    const nodeId = (await node.admin.get<NodeList>('/v1/nodes')).body.items[0]?.nodeId;
    const egress = (await node.admin.get<WorkerList>(`/v1/nodes/${nodeId}/workers`)).body.items.find((w) => w.kind === 'egress');
    expect(egress?.state).toBe('ready');
    const listeners = await tcpListenersOfGroup(Number(egress?.id));
    expect(listeners.length).toBeGreaterThan(0);
    expect(listeners.filter((l) => !['127.0.0.1', '[::1]'].includes(l.address))).toEqual([]);
    for (const port of [7890, ...listeners.map((l) => l.port)]) expect(await acceptsTcp(node.nodeIp, port), `port ${port}`).toBe(false);
  }

  it('records a VP8 camera for an app that wants MP4 by transcoding it (auto: track-composite); the download plays', async () => {
    const mp4 = await createTenant(node.admin, 'acceptance mp4');
    try {
      expect((await mp4.client.patch<AppView>(`/v1/apps/${mp4.app.id}`, { recordingFormat: 'mp4' })).status).toBe(200);
      const { started, done, media } = await record('interview', { on: mp4 });
      expect(started.mode).toBe('track_composite');
      expect(done.location.endsWith('.mp4')).toBe(true);
      expect(media.streams).toEqual(['audio', 'video']);
    } finally {
      await node.admin.delete(`/v1/apps/${mp4.app.id}`);
    }
  });

  it('records two publishers composed in Chromium, sandboxed (auto: room-composite); the download plays with video and audio', async () => {
    let chromes: string[][] = [];
    const { started, media } = await record('panel', {
      publishers: 2,
      whileRecording: async () => {
        chromes = await waitFor('Chromium composing the room', () => {
          const found = chromeCommandLines();
          return Promise.resolve(found.length > 0 ? found : undefined);
        });
      },
    });
    expect(started.mode).toBe('room_composite');
    expect(media.streams).toEqual(['audio', 'video']);
    // Chromium composes what untrusted publishers send: its sandbox stays on.
    expect(chromes.filter((args) => args.includes('--no-sandbox'))).toEqual([]);
  });

  it("ends a stream nobody joined at the join timeout, without ever making it a LiveKit room, and frees its place in the app's quota", async () => {
    const joinTimeoutS = Number(node.env['TALLY_STREAM_JOIN_TIMEOUT_S'] ?? '300');
    const noShow = await createTenant(node.admin, 'acceptance no-show');
    expect((await node.admin.patch(`/v1/apps/${noShow.app.id}`, { quotas: { maxStreams: 1 } })).status).toBe(200);
    const streams = `/v1/apps/${noShow.app.id}/streams`;
    try {
      const stream = await createStream(noShow, 'nobody came');
      const full = await noShow.client.post<LimitRefusal>(streams, { name: 'one too many' });
      expect(full.status).toBe(429);
      expect(full.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams', limit: 1, used: 1 });
      // Nothing needed a room for it (no token, ingress, recording or HLS): LiveKit has none.
      expect(await roomsOf(node).listRooms([stream.room])).toEqual([]);

      const ended = await waitFor(
        'the unjoined stream to end',
        async () => {
          const got = (await noShow.client.get<StreamView>(`${streams}/${stream.id}`)).body;
          return got.status === 'ended' ? got : undefined;
        },
        // The join timeout, then the worker's next sweep.
        (joinTimeoutS + Number(node.env['TALLY_SWEEP_INTERVAL_S'] ?? '30') + 30) * 1000,
      );
      expect(ended.endReason).toBe('join_timeout');
      expect(Date.parse(ended.endedAt ?? '') - Date.parse(stream.createdAt)).toBeGreaterThanOrEqual(joinTimeoutS * 1000);
      // The row ends first, then the reservation goes (a crash in between holds the place too long,
      // never frees it early): the place is free right after, if not at the same instant.
      const next = await waitFor(
        'the place it freed',
        async () => {
          const created = await noShow.client.post<StreamView>(streams, { name: 'the place it freed' });
          if (created.status !== 429) return created;
          return undefined;
        },
        10_000,
      );
      expect(next.status, JSON.stringify(next.body)).toBe(201);
    } finally {
      await node.admin.delete(`/v1/apps/${noShow.app.id}`);
    }
  });

  it('ends a stream for everyone on DELETE and frees its place', async () => {
    const stream = await createStream(tenant, 'short');
    const ended = await tenant.client.delete<StreamView>(`/v1/apps/${tenant.app.id}/streams/${stream.id}`);
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ status: 'ended', endReason: 'ended_by_api' });
  });
});

/** The command lines of the Chromium processes running on this host. */
function chromeCommandLines(): string[][] {
  const found: string[][] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (args[0] !== undefined && /chrom(e|ium)/.test(args[0].split('/').pop() ?? '')) found.push(args);
    } catch {
      // Gone since the listing.
    }
  }
  return found;
}
