import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ParticipantInfo_Kind } from '@livekit/protocol';
import { TrackKind } from '@livekit/rtc-node';
import type { AppView, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { LivekitEgressClient } from '@tally/livekit';
import { type ApiClient, type Child, startAppProcess, waitFor } from '@tally/testing';
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { download, recordingIn } from './recording-client.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { SignedReceiver } from './signed-receiver.js';

const run = promisify(execFile);

type Tenant = Awaited<ReturnType<typeof createTenant>>;

describe('recordings on real LiveKit egress', () => {
  let harness: ApiHarness;
  let worker: Child;
  let receiver: SignedReceiver;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    harness = await startApiHarness({}, { egress: true });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-recordings-${Date.now()}.log`));
    receiver = await SignedReceiver.start();
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await receiver?.stop();
    await worker?.stop();
    await harness?.stop();
  });

  async function tenantWithWebhooks(name: string): Promise<Tenant> {
    const tenant = await createTenant(harness.admin, name);
    expect((await tenant.client.patch<AppView>(`/v1/apps/${tenant.app.id}`, { webhookUrl: receiver.url })).status).toBe(200);
    const rotated = await tenant.client.post<{ secret: string }>(`/v1/apps/${tenant.app.id}/webhook-secret`);
    expect(rotated.status).toBe(201);
    receiver.secret = rotated.body.secret;
    return tenant;
  }

  /** A stream with real participants publishing; resolves once LiveKit reports every track. */
  async function liveStream(client: ApiClient, appId: string, who: { identity: string; video: boolean }[]): Promise<StreamView> {
    const stream = await createStream(client, appId);
    for (const { identity, video } of who) {
      const token = (await client.post<StreamToken>(`/v1/apps/${appId}/streams/${stream.id}/tokens`, { identity, role: 'publisher' })).body;
      publishers.push(await joinAndPublish(token.url, token.token, { video }));
    }
    const live = await waitFor(
      'the stream to be live with its publishers',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${appId}/streams/${stream.id}`)).body;
        return s.status === 'live' && s.publishers === who.length ? s : undefined;
      },
      30_000,
    );
    const only = who.length === 1 ? who[0] : undefined;
    if (only) await tracksUp(client, appId, stream.id, only.video ? undefined : [TrackKind.KIND_AUDIO]);
    return live;
  }

  async function probe(path: string): Promise<{ durationS: number; streams: string[] }> {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', path]);
    const parsed = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_type: string }[] };
    return { durationS: Number(parsed.format.duration), streams: parsed.streams.map((s) => s.codec_type).sort() };
  }

  it('records one publisher as passthrough WebM until they leave, signs its webhooks, and serves the file', async () => {
    const { app, client } = await tenantWithWebhooks('recorder');
    const stream = await liveStream(client, app.id, [{ identity: 'host', video: true }]);

    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    expect(started.body.mode).toBe('passthrough');
    expect(['starting', 'active']).toContain(started.body.status);
    expect(started.body.reason).toMatch(/auto/);

    const active = await recordingIn(client, app.id, started.body.id, ['active']);
    // A complete file is only served once complete.
    expect((await client.get(`/v1/apps/${app.id}/recordings/${active.id}/file`)).status).toBe(409);
    await new Promise((r) => setTimeout(r, 8_000));
    // The publisher stops sending and leaves: egress closes the file on its own. Published while
    // recording: from the recording's start to the last media sent (leaving can take seconds more
    // on a busy host, with nothing sent).
    const mediaStoppedAt = Date.now();
    await publishers.pop()?.stop();
    const recordedS = (mediaStoppedAt - Date.parse(active.startedAt ?? '')) / 1000;

    const complete = await recordingIn(client, app.id, active.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null, storage: 'local', location: `${app.id}/${active.id}.webm` });
    expect(complete.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(complete.codecs?.map((c) => c.type).sort()).toEqual(['audio', 'video']);
    expect(Math.abs((complete.durationS ?? 0) - recordedS)).toBeLessThan(2);

    const file = await download(client, app.id, complete);
    const probed = await probe(file);
    expect(probed.streams).toEqual(['audio', 'video']);
    expect(Math.abs(probed.durationS - recordedS)).toBeLessThan(2);

    const ranged = await client.raw(`/v1/apps/${app.id}/recordings/${complete.id}/file`, { range: 'bytes=0-99' });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 0-99/${complete.sizeBytes}`);
    expect((await ranged.arrayBuffer()).byteLength).toBe(100);

    const events = await waitFor(
      'recording.started and recording.completed at the app',
      () => {
        const got = [...receiver.of('recording.started', complete.id), ...receiver.of('recording.completed', complete.id)];
        return Promise.resolve(got.length === 2 ? got : undefined);
      },
      30_000,
    );
    expect(events.every((e) => e.signatureValid)).toBe(true);
    expect(events[1]?.body.data).toMatchObject({
      id: complete.id,
      mode: 'passthrough',
      durationS: complete.durationS,
      sizeBytes: complete.sizeBytes,
    });
  }, 180_000);

  it('records a single audio track with track egress, as Opus in OGG', async () => {
    const { app, client } = await tenantWithWebhooks('audio');
    const stream = await liveStream(client, app.id, [{ identity: 'radio', video: false }]);
    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'auto' });
    expect(started.status).toBe(201);
    expect(started.body.mode).toBe('track');
    await recordingIn(client, app.id, started.body.id, ['active']);

    // The recorder is in the LiveKit room, but it is not somebody in the stream. Once the API has
    // applied the joins so far (the host, the viewer tracksUp sent, the recorder) and that viewer's
    // leave, the stream counts the host alone.
    const { url, apiKey, apiSecret } = harness.stack.config.livekit;
    const livekit = new RoomServiceClient(url, apiKey, apiSecret);
    await waitFor('the egress recorder in the room', async () =>
      (await livekit.listParticipants(stream.room)).some((p) => p.kind === ParticipantInfo_Kind.EGRESS) ? true : undefined,
    );
    const prisma = createPrismaClient(harness.stack.config.databaseUrl);
    try {
      const applied = (event: string) => prisma.livekitEvent.count({ where: { room: stream.room, event } });
      await waitFor('the joins and the leave applied', async () =>
        (await applied('participant_joined')) >= 3 && (await applied('participant_left')) >= 1 ? true : undefined,
      );
    } finally {
      await prisma.$disconnect();
    }
    expect((await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body).toMatchObject({
      participants: 1,
      publishers: 1,
    });
    await new Promise((r) => setTimeout(r, 4_000));
    await client.post(`/v1/apps/${app.id}/recordings/${started.body.id}/stop`);
    const complete = await recordingIn(client, app.id, started.body.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', location: `${app.id}/${complete.id}.ogg` });
    expect(complete.codecs).toEqual([{ type: 'audio', codec: 'opus' }]);
    expect((await probe(await download(client, app.id, complete))).streams).toEqual(['audio']);
  }, 120_000);

  it('records two publishers with room-composite (Chrome) into one MP4', async () => {
    const { app, client } = await tenantWithWebhooks('meeting');
    const stream = await liveStream(client, app.id, [
      { identity: 'alice', video: true },
      { identity: 'bob', video: true },
    ]);
    const egress = new LivekitEgressClient(harness.stack.config.livekit);
    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ mode: 'room_composite', layout: 'grid' });
    expect((await egress.list({ activeOnly: false, room: stream.room })).length).toBe(1);
    const active = await recordingIn(client, app.id, started.body.id, ['active', 'failed']);
    expect(active).toMatchObject({ status: 'active', error: null });
    await new Promise((r) => setTimeout(r, 5_000));
    await client.post(`/v1/apps/${app.id}/recordings/${active.id}/stop`);
    const complete = await recordingIn(client, app.id, active.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', location: `${app.id}/${active.id}.mp4` });
    expect((await probe(await download(client, app.id, complete))).streams).toEqual(['audio', 'video']);
  }, 150_000);

  it('refuses a second concurrent recording over maxRecordings with 429 app.recordings, before LiveKit is asked', async () => {
    const { app, client } = await tenantWithWebhooks('capped');
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxRecordings: 1 } });
    const stream = await liveStream(client, app.id, [{ identity: 'solo', video: true }]);
    const first = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
    expect(first.status).toBe(201);
    const second = await client.post<{ error: { resource: string; limit: number; used: number } }>(
      `/v1/apps/${app.id}/streams/${stream.id}/recordings`,
      {},
    );
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.recordings', limit: 1, used: 1 });
    const egress = new LivekitEgressClient(harness.stack.config.livekit);
    // Only the first recording's egresses exist (a passthrough pair for this publisher): the refusal came first.
    const egresses = await egress.list({ activeOnly: false, room: stream.room });
    expect(egresses.length).toBeGreaterThan(0);
    expect(egresses.map((e) => e.requestedPath ?? '').filter((path) => !path.includes(first.body.id))).toEqual([]);
    await client.post(`/v1/apps/${app.id}/recordings/${first.body.id}/stop`);
    await recordingIn(client, app.id, first.body.id, ['complete', 'failed']);
  }, 120_000);

  it('keeps recordings to their app and validates the request', async () => {
    const owner = await tenantWithWebhooks('owner');
    const other = await createTenant(harness.admin, 'other');
    const stream = await liveStream(owner.client, owner.app.id, [{ identity: 'x', video: false }]);
    const bad = await owner.client.post<{ error: { details: unknown } }>(`/v1/apps/${owner.app.id}/streams/${stream.id}/recordings`, {
      mode: 'vhs',
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('mode');
    const requested = await owner.client.post<RecordingView>(`/v1/apps/${owner.app.id}/streams/${stream.id}/recordings`, {
      mode: 'track_composite',
    });
    expect(requested.status).toBe(201);
    expect(requested.body.reason).toBe('track_composite forced by the request');
    await owner.client.post(`/v1/apps/${owner.app.id}/recordings/${requested.body.id}/stop`);
    const forced = await owner.client.post(`/v1/apps/${owner.app.id}/streams/${stream.id}/recordings`, {
      mode: 'track_composite',
      layout: 'Grid!',
    });
    expect(forced.status).toBe(400);

    const started = await owner.client.post<RecordingView>(`/v1/apps/${owner.app.id}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    const id = started.body.id;
    for (const path of [`recordings/${id}`, `recordings/${id}/file`]) {
      expect((await other.client.get(`/v1/apps/${owner.app.id}/${path}`)).status).toBe(404);
      expect((await other.client.get(`/v1/apps/${other.app.id}/${path}`)).status).toBe(404);
    }
    expect((await other.client.post(`/v1/apps/${other.app.id}/recordings/${id}/stop`)).status).toBe(404);
    expect((await other.client.post(`/v1/apps/${other.app.id}/streams/${stream.id}/recordings`, {})).status).toBe(404);
    expect((await owner.client.get(`/v1/apps/${owner.app.id}/recordings/rec_0000000000000000`)).status).toBe(404);
    const listed = await owner.client.get<{ items: RecordingView[] }>(`/v1/apps/${owner.app.id}/recordings?streamId=${stream.id}`);
    expect(listed.body.items.map((r) => r.id)).toEqual([id, requested.body.id]);
    await owner.client.post(`/v1/apps/${owner.app.id}/recordings/${id}/stop`);
    await recordingIn(owner.client, owner.app.id, id, ['complete', 'failed']);
  }, 120_000);
});

describe('recordings when the pool has no room for them', () => {
  let harness: ApiHarness;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    // A profile where one track-composite recording needs more RAM than any node has.
    const profile = join(tmpdir(), `tally-profile-${Date.now()}.json`);
    writeFileSync(
      profile,
      JSON.stringify({ version: 1, costs: { 'egress.track_composite': { ramMb: 100_000, cpuMillicores: 350, nicKbps: 3_000 } } }),
    );
    harness = await startApiHarness({ TALLY_CAPACITY_PROFILE: profile }, { egress: true });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await harness?.stop();
  });

  it('answers 429 naming node.ram and never calls LiveKit egress', async () => {
    const { app, client } = await createTenant(harness.admin, 'squeezed');
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxRecordings: 10 } });
    const stream = await createStream(client, app.id);
    const token = (await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'p', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token));
    await waitFor(
      'two published tracks',
      async () => ((await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.publishers === 1 ? true : undefined),
      30_000,
    );
    const refused = await client.post<{ error: Record<string, unknown> }>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {
      mode: 'track_composite',
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'capacity_exhausted', resource: 'node.ram' });
    expect(Number(refused.body.error['requested'])).toBeGreaterThanOrEqual(100_000);
    expect(Number(refused.body.error['retryAfterS'])).toBeGreaterThan(0);
    expect(await new LivekitEgressClient(harness.stack.config.livekit).list({ activeOnly: false, room: stream.room })).toEqual([]);
    expect((await client.get<{ items: unknown[] }>(`/v1/apps/${app.id}/recordings`)).body.items).toEqual([]);
  }, 90_000);
});
