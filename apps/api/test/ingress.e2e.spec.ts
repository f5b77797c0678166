import { type ChildProcess, execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dispose, TrackKind } from '@livekit/rtc-node';
import type { AppView, CreatedIngress, IngressList, IngressView, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { LivekitIngressClient, LivekitRoomClient } from '@tally/livekit';
import { type Child, pushRtmp, startAppProcess, stopPush, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { firstVideoFrame, joinAsViewer, type Viewer } from '@tally/testing/media';
import { publishWhip, type WhipPublisher } from './whip-client.js';

const run = promisify(execFile);

describe('RTMP / WHIP ingress through Tally on real LiveKit ingress', () => {
  let harness: ApiHarness;
  let worker: Child;
  let livekitIngresses: LivekitIngressClient;
  let rooms: LivekitRoomClient;
  const pushes: ChildProcess[] = [];
  let whip: WhipPublisher | undefined;
  let viewer: Viewer | undefined;

  beforeAll(async () => {
    harness = await startApiHarness({}, { egress: true, ingress: true });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-ingress-${Date.now()}.log`));
    const { url, apiKey, apiSecret } = harness.stack.livekit;
    livekitIngresses = new LivekitIngressClient({ url, apiKey, apiSecret });
    rooms = new LivekitRoomClient({ url, apiKey, apiSecret });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(pushes.map((p) => stopPush(p)));
    await whip?.stop();
    await viewer?.room.disconnect();
    await dispose();
    await worker?.stop();
    await harness?.stop();
  });

  async function probe(path: string): Promise<string[]> {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'json', path]);
    return (JSON.parse(stdout) as { streams: { codec_type: string }[] }).streams.map((s) => s.codec_type).sort();
  }

  it('takes an RTMP push into a stream, records it, hides it from other apps, counts it against the quota and deletes it', async () => {
    const { app, client } = await createTenant(harness.admin, 'broadcaster');
    const stream = await createStream(client, app.id, 'studio feed');

    const created = await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' });
    expect(created.status).toBe(201);
    const ingress = created.body;
    expect(ingress).toMatchObject({ appId: app.id, streamId: stream.id, kind: 'rtmp', transcode: true, status: 'inactive' });
    expect(ingress.id).toMatch(/^ing_[a-z0-9]{16}$/);
    expect(ingress.url).toMatch(/^rtmp:\/\//);
    expect(ingress.streamKey.length).toBeGreaterThan(8);

    // The key is shown once: never in a read or a list.
    const read = await client.get<IngressView>(`/v1/apps/${app.id}/ingresses/${ingress.id}`);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain(ingress.streamKey);
    const listed = await client.get<IngressList>(`/v1/apps/${app.id}/ingresses`);
    expect(listed.body.items.map((i) => i.id)).toEqual([ingress.id]);
    expect(JSON.stringify(listed.body)).not.toContain(ingress.streamKey);

    pushes.push(pushRtmp(`${ingress.url}/${ingress.streamKey}`, 180));

    const live = await waitFor(
      'the stream to be live with the ingress publishing',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body;
        return s.status === 'live' && s.publishers === 1 ? s : undefined;
      },
      60_000,
    ).catch((error: unknown) => {
      const log = harness.stack.ingress ? readFileSync(harness.stack.ingress.logFile, 'utf8').slice(-4_000) : '';
      throw new Error(`${String(error)}\n--- ingress log (tail) ---\n${log}`);
    });
    expect(live.publishers).toBe(1);
    await waitFor(
      'ingress_started to mark the ingress publishing',
      async () =>
        (await client.get<IngressView>(`/v1/apps/${app.id}/ingresses/${ingress.id}`)).body.status === 'publishing' ? true : undefined,
      30_000,
    );

    // Ingress publishes its audio and video tracks one after the other.
    await waitFor(
      'the ingress participant to publish video and audio',
      async () => {
        const [p, ...others] = await rooms.listParticipants(live.room);
        const kinds = new Set(p?.tracks.map((t) => t.kind));
        return others.length === 0 && p?.identity === `ingress-${ingress.id}` && kinds.has('video') && kinds.has('audio')
          ? true
          : undefined;
      },
      30_000,
    );
    // The pushed feed records like any publisher: one publisher with video and audio -> passthrough.
    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    expect(started.body.mode).toBe('passthrough');
    await waitFor(
      'the recording to be active',
      async () =>
        (await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${started.body.id}`)).body.status === 'active' ? true : undefined,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 6_000));
    await client.post(`/v1/apps/${app.id}/recordings/${started.body.id}/stop`);
    const complete = await waitFor(
      'the recording to complete',
      async () => {
        const r = (await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${started.body.id}`)).body;
        return r.status === 'complete' || r.status === 'failed' ? r : undefined;
      },
      90_000,
    );
    expect(complete).toMatchObject({ status: 'complete', error: null });
    const file = join(tmpdir(), `${complete.id}.mp4`);
    const download = await client.raw(`/v1/apps/${app.id}/recordings/${complete.id}/file`);
    expect(download.status).toBe(200);
    writeFileSync(file, Buffer.from(await download.arrayBuffer()));
    expect(await probe(file)).toEqual(['audio', 'video']);

    // Another app's key sees nothing and deletes nothing.
    const other = await createTenant(harness.admin, 'neighbour');
    expect((await other.client.get(`/v1/apps/${other.app.id}/ingresses/${ingress.id}`)).status).toBe(404);
    expect((await other.client.delete(`/v1/apps/${other.app.id}/ingresses/${ingress.id}`)).status).toBe(404);
    expect((await other.client.get(`/v1/apps/${app.id}/ingresses/${ingress.id}`)).status).toBe(404);
    expect((await other.client.delete(`/v1/apps/${app.id}/ingresses/${ingress.id}`)).status).toBe(404);
    expect(
      (await other.client.post(`/v1/apps/${other.app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' })).status,
      "another app's stream",
    ).toBe(404);

    // One ingress at a time for this app: the second is refused, naming the quota.
    expect((await harness.admin.patch<AppView>(`/v1/apps/${app.id}`, { quotas: { maxIngresses: 1 } })).status).toBe(200);
    const refused = await client.post<{ error: Record<string, unknown> }>(`/v1/apps/${app.id}/ingresses`, {
      streamId: stream.id,
      kind: 'whip',
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.ingresses', limit: 1, used: 1, requested: 1 });

    // Deleting removes it from LiveKit, ends it in Tally and frees the quota.
    const identities = async () => (await livekitIngresses.list({ room: live.room })).map((i) => i.participantIdentity);
    expect(await identities()).toEqual([`ingress-${ingress.id}`]);
    expect((await client.delete(`/v1/apps/${app.id}/ingresses/${ingress.id}`)).status).toBe(204);
    expect(await identities()).toEqual([]);
    expect((await client.get<IngressView>(`/v1/apps/${app.id}/ingresses/${ingress.id}`)).body).toMatchObject({ status: 'ended' });
    const whip = await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'whip' });
    expect(whip.status).toBe(201);
    expect(whip.body).toMatchObject({ kind: 'whip', transcode: false });
    expect(whip.body.url).toMatch(/^http:\/\//);
  }, 300_000);

  it('takes a WHIP publish from Chromium: the stream goes live and a viewer receives its video and audio', async () => {
    const { app, client } = await createTenant(harness.admin, 'whip studio');
    const stream = await createStream(client, app.id, 'browser feed');
    const created = await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'whip' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'whip', transcode: false, status: 'inactive' });

    whip = await publishWhip(created.body.url, created.body.streamKey);
    expect(whip.status).toBe(201);
    await whip.connected();
    const live = await waitFor(
      'the stream to be live with the WHIP publisher',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body;
        return s.status === 'live' && s.publishers === 1 ? s : undefined;
      },
      60_000,
    );
    expect(live.publishers).toBe(1);

    const token = await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'viewer', role: 'viewer' });
    expect(token.status).toBe(201);
    viewer = await joinAsViewer(token.body.url, token.body.token);
    const tracks = await viewer.tracks;
    const video = tracks.find((t) => t.kind === TrackKind.KIND_VIDEO);
    expect(video).toBeDefined();
    expect((await firstVideoFrame(video!)).width).toBeGreaterThan(0);
    const publishers = viewer.room.remoteParticipants;
    expect([...publishers.values()].map((p) => p.identity)).toEqual([`ingress-${created.body.id}`]);

    await waitFor(
      'ingress_started to mark the ingress publishing',
      async () =>
        (await client.get<IngressView>(`/v1/apps/${app.id}/ingresses/${created.body.id}`)).body.status === 'publishing' ? true : undefined,
      30_000,
    );
    await whip.stop();
    whip = undefined;
    expect((await client.delete(`/v1/apps/${app.id}/ingresses/${created.body.id}`)).status).toBe(204);
  }, 180_000);

  it('refuses an ingress into an ended stream', async () => {
    const { app, client } = await createTenant(harness.admin, 'late');
    const stream = await createStream(client, app.id);
    expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBe(200);
    const refused = await client.post(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' });
    expect(refused.status).toBe(409);
  });
});
