import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapacityLedger } from '@tally/admission';
import type { AppMeteringView, AppView, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { ladderReservationId } from '@tally/recordings';
import { type ApiClient, type Child, startAppProcess, TEST_NODE_BUDGET, waitFor } from '@tally/testing';
import { planLadder } from '@tally/transcode';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { expectLadderPlays, type Ladder, probeVideo } from './ladder-playback.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { SignedReceiver } from './signed-receiver.js';

type Tenant = Awaited<ReturnType<typeof createTenant>>;

describe('VOD ladders made by the node agents', () => {
  let harness: ApiHarness;
  let worker: Child;
  let receiver: SignedReceiver;
  let redis: Redis;
  const publishers: Publisher[] = [];
  const children: Child[] = [];

  beforeAll(async () => {
    harness = await startApiHarness({}, { egress: true });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-ladders-${Date.now()}.log`));
    receiver = await SignedReceiver.start();
    redis = new Redis(harness.stack.redis.url);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await Promise.all(children.map((c) => c.stop()));
    redis?.disconnect();
    await receiver?.stop();
    await worker?.stop();
    await harness?.stop();
  });

  async function tenantWithWebhooks(name: string): Promise<Tenant> {
    const tenant = await createTenant(harness.admin, name);
    expect((await tenant.client.patch<AppView>(`/v1/apps/${tenant.app.id}`, { webhookUrl: receiver.url })).status).toBe(200);
    const rotated = await tenant.client.post<{ secret: string }>(`/v1/apps/${tenant.app.id}/webhook-secret`);
    receiver.secret = rotated.body.secret;
    return tenant;
  }

  async function recordingIn(client: ApiClient, appId: string, id: string, done: (r: RecordingView) => boolean): Promise<RecordingView> {
    return waitFor(
      `recording ${id}`,
      async () => {
        const r = (await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
        return done(r) ? r : undefined;
      },
      180_000,
    );
  }

  /** A real recording of a real publisher; `whileActive` runs while egress is writing it. */
  async function completeRecording(
    tenant: Tenant,
    whileActive: (recording: RecordingView) => Promise<void> = () => Promise.resolve(),
  ): Promise<RecordingView> {
    const { app, client } = tenant;
    const stream: StreamView = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    const publisher = await joinAndPublish(token.url, token.token, { video: true });
    publishers.push(publisher);
    await waitFor(
      'the publisher to be live',
      async () => ((await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.publishers === 1 ? true : undefined),
      30_000,
    );
    await tracksUp(client, app.id, stream.id);
    // Track-composite: egress encodes a 720p source, so the ladder's top rendition is known.
    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
    expect(started.status).toBe(201);
    const active = await recordingIn(client, app.id, started.body.id, (r) => r.status === 'active');
    await whileActive(active);
    await new Promise((r) => setTimeout(r, 7_000));
    await publisher.stop();
    const complete = await recordingIn(client, app.id, active.id, (r) => r.status === 'complete' || r.status === 'failed');
    expect(complete).toMatchObject({ status: 'complete', error: null });
    return complete;
  }

  /** The app's ladder minutes from the hour of `since` on. */
  async function ladderMinutes(client: ApiClient, appId: string, since: number): Promise<AppMeteringView['ladderMinutes']> {
    const from = new Date(Math.floor(since / 3_600_000) * 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const usage = await client.get<AppMeteringView>(`/v1/apps/${appId}/metering?from=${from}&to=${to}&granularity=hour`);
    expect(usage.status).toBe(200);
    return usage.body.ladderMinutes;
  }

  async function ladderDone(client: ApiClient, recording: RecordingView): Promise<RecordingView> {
    return recordingIn(client, recording.appId, recording.id, (r) => r.ladder?.status === 'ready' || r.ladder?.status === 'failed');
  }

  it('makes a CPU ladder from a complete recording: every rendition plays, never above the source, and the app is told (signed)', async () => {
    const tenant = await tenantWithWebhooks('ladder');
    const { app, client } = tenant;
    const recording = await completeRecording(tenant, async (active) => {
      const early = await client.post<{ error: { code: string } }>(`/v1/apps/${app.id}/recordings/${active.id}/ladder`);
      expect(early.status).toBe(409);
      expect(early.body.error.code).toBe('conflict');
    });
    expect(recording.ladder).toBeNull();
    const source = await probeVideo(join(harness.stack.env['TALLY_RECORDINGS_DIR'] ?? '', recording.location));

    // Refused before anything is queued, naming the limit.
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxTranscodes: 0 } });
    const refused = await client.post<{ error: { code: string; resource: string; limit: number } }>(
      `/v1/apps/${app.id}/recordings/${recording.id}/ladder`,
    );
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.transcodes', limit: 0 });
    expect((await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${recording.id}`)).body.ladder).toBeNull();
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxTranscodes: null } });

    const requestedAt = Date.now();
    const requested = await client.post<RecordingView>(`/v1/apps/${app.id}/recordings/${recording.id}/ladder`);
    expect(requested.status).toBe(202);
    // No GPU on this node: the CPU takes it.
    expect(requested.body.ladder).toMatchObject({ encoder: 'x264', nodeId: harness.stack.nodeId, renditions: [], master: null });
    expect(['queued', 'running']).toContain(requested.body.ladder?.status);
    // Asking again does not start a second ladder.
    const again = await client.post<RecordingView>(`/v1/apps/${app.id}/recordings/${recording.id}/ladder`);
    expect(again.status).toBe(202);

    const done = await ladderDone(client, recording);
    const doneAt = Date.now();
    const ladder = done.ladder as Ladder;
    expect(ladder).toMatchObject({ status: 'ready', encoder: 'x264', error: null });
    // Billed as CPU ladder minutes: the agent's run, which lies within the wait for it.
    const billed = await ladderMinutes(client, app.id, requestedAt);
    expect(billed.gpu).toBe(0);
    expect(billed.cpu).toBeGreaterThan(0);
    expect(billed.cpu).toBeLessThanOrEqual((doneAt - requestedAt) / 60_000);
    expect(ladder.master).toBe(`/v1/apps/${app.id}/recordings/${recording.id}/ladder/master.m3u8`);
    const planned = planLadder(source).map((r) => ({ ...r, playlist: `${r.name}.m3u8` }));
    expect(ladder.renditions).toEqual(planned);
    // Egress writes track composites at 720p: the ladder stops there (no upscale to 1080p).
    expect(source.height).toBe(720);
    expect(ladder.renditions.map((r) => `${r.width}x${r.height}`)).toEqual(['1280x720', '854x480', '640x360']);
    await expectLadderPlays(client, done, ladder);

    const [event] = await waitFor(
      'recording.ladder_ready at the app',
      () =>
        Promise.resolve(
          receiver.of('recording.ladder_ready', recording.id).length > 0 ? receiver.of('recording.ladder_ready', recording.id) : undefined,
        ),
      30_000,
    );
    expect(event?.signatureValid).toBe(true);
    expect(event?.body.data).toMatchObject({ id: recording.id, ladder: { status: 'ready', renditions: ladder.renditions } });
    expect(await new CapacityLedger(redis).held(ladderReservationId(recording.id))).toBeUndefined();

    // Another app's key, unknown ids and bad file names.
    const other = await createTenant(harness.admin, 'other');
    expect((await other.client.post(`/v1/apps/${app.id}/recordings/${recording.id}/ladder`)).status).toBe(404);
    expect((await other.client.post(`/v1/apps/${other.app.id}/recordings/${recording.id}/ladder`)).status).toBe(404);
    expect((await other.client.get(`/v1/apps/${other.app.id}/recordings/${recording.id}/ladder/master.m3u8`)).status).toBe(404);
    expect((await client.post(`/v1/apps/${app.id}/recordings/rec_0000000000000000/ladder`)).status).toBe(404);
    expect((await client.get(`/v1/apps/${app.id}/recordings/${recording.id}/ladder/none.ts`)).status).toBe(404);
    const bad = await client.get<{ error: { details: unknown } }>(`/v1/apps/${app.id}/recordings/${recording.id}/ladder/..%2Fx.mp4`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('file');
    expect((await harness.anonymous.get(`/v1/apps/${app.id}/recordings/${recording.id}/ladder/master.m3u8`)).status).toBe(401);
  }, 420_000);

  it('makes the ladder on completion when the app asks for it, and falls back to the CPU when the GPU run fails', async () => {
    // A node whose nvidia-smi reports a GeForce card: it advertises NVENC sessions, but ffmpeg finds no GPU here.
    const bin = mkdtempSync(join(tmpdir(), 'fake-nvidia-'));
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'nvidia-smi'), '#!/bin/sh\necho "NVIDIA GeForce RTX 4070, 550.54.14"\n');
    chmodSync(join(bin, 'nvidia-smi'), 0o755);
    const gpuNode = `gpu-${Date.now().toString(36)}`;
    const gpuLog = join(tmpdir(), `tally-agent-${gpuNode}.log`);
    children.push(
      await startAppProcess(
        'agent',
        {
          ...harness.stack.env,
          ...TEST_NODE_BUDGET,
          TALLY_NODE_ID: gpuNode,
          TALLY_NODE_ROLE: 'worker',
          TALLY_HEARTBEAT_INTERVAL_S: '1',
          PATH: `${bin}:${process.env['PATH'] ?? ''}`,
        },
        gpuLog,
      ),
    );
    const registry = new NodeRegistry(redis);
    const node = await waitFor('the GPU node in the pool', async () => (await registry.get(gpuNode)) ?? undefined, 30_000);
    expect(node.budget.gpus).toEqual([{ name: 'NVIDIA GeForce RTX 4070', nvencSessions: 8 }]);

    const tenant = await tenantWithWebhooks('auto-ladder');
    const { app, client } = tenant;
    expect((await client.patch<AppView>(`/v1/apps/${app.id}`, { transcodeLadder: true })).body.transcodeLadder).toBe(true);
    const recording = await completeRecording(tenant);
    const completedAt = Date.now();
    const source = await probeVideo(join(harness.stack.env['TALLY_RECORDINGS_DIR'] ?? '', recording.location));

    const done = await ladderDone(client, recording);
    const doneAt = Date.now();
    const ladder = done.ladder as Ladder;
    expect(ladder).toMatchObject({ status: 'ready', encoder: 'x264', error: null });
    // The failed GPU run and the CPU run are billed apart, each for its own time.
    const billed = await ladderMinutes(client, app.id, completedAt - 60_000);
    expect(billed.gpu).toBeGreaterThan(0);
    expect(billed.cpu).toBeGreaterThan(0);
    expect(billed.gpu + billed.cpu).toBeLessThanOrEqual((doneAt - completedAt + 60_000) / 60_000);
    expect(ladder.renditions.map((r) => r.name)).toEqual(planLadder(source).map((r) => r.name));
    await expectLadderPlays(client, done, ladder);
    // The GPU node was asked first (free NVENC sessions are preferred) and its h264_nvenc run really failed.
    expect(readFileSync(gpuLog, 'utf8')).toMatch(new RegExp(`ladder ${recording.id} \\(nvenc\\) failed`));
    expect(await new CapacityLedger(redis).held(ladderReservationId(recording.id))).toBeUndefined();
    expect(receiver.of('recording.ladder_failed', recording.id)).toEqual([]);
    await waitFor(
      'recording.ladder_ready at the app',
      () => Promise.resolve(receiver.of('recording.ladder_ready', recording.id).length === 1 ? true : undefined),
      30_000,
    );
  }, 420_000);
});
