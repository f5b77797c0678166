import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppUsageView, RecordingView, StreamView } from '@tally/contracts';
import { LivekitEgressClient, type LivekitCredentials } from '@tally/livekit';
import { ApiClient, type Child, freePort, startAppProcess, startStack, type TestStack, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../worker/src/bootstrap.js';
import { startApi } from '../src/bootstrap.js';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

const JOIN_TIMEOUT_S = 15;
const ENV = { TALLY_STREAM_JOIN_TIMEOUT_S: String(JOIN_TIMEOUT_S) };

/**
 * A room-composite recording asked for before anyone joins (auto picks it: it records those who
 * join later) of a stream nobody ever joins. `sweep` (when set) asks the worker for a sweep while
 * waiting. Resolves with the stream and the recording once both ended.
 */
async function noShow(admin: ApiClient, livekit: LivekitCredentials, sweep?: () => Promise<void>) {
  const { app, client } = await createTenant(admin, 'no-show');
  const stream = await createStream(client, app.id);
  const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
  expect(started.status).toBe(201);
  expect(started.body).toMatchObject({ mode: 'room_composite', status: 'starting' });
  const used = async () =>
    Object.fromEntries((await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body.items.map((q) => [q.quota, q.used]));
  expect(await used()).toMatchObject({ maxStreams: 1, maxRecordings: 1, maxRoomComposites: 1 });
  // A real recorder is waiting in the room (Chrome, for somebody to record).
  const egress = new LivekitEgressClient(livekit);
  expect((await egress.list({ activeOnly: true, room: stream.room })).map((e) => e.state)).toEqual(['starting']);

  let sweptAt = 0;
  const settled = await waitFor(
    'the stream and its recording to end',
    async () => {
      if (sweep && Date.now() - sweptAt > 2_000) {
        sweptAt = Date.now();
        await sweep();
      }
      const s = (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body;
      const r = (await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${started.body.id}`)).body;
      return s.status === 'ended' && ['complete', 'failed'].includes(r.status) ? { stream: s, recording: r } : undefined;
    },
    (JOIN_TIMEOUT_S + 90) * 1000,
  );
  // Not before the timeout (LiveKit's clock, which closes the room, may run a moment apart from the API's).
  expect(Date.parse(settled.stream.endedAt ?? '') - Date.parse(stream.createdAt)).toBeGreaterThan((JOIN_TIMEOUT_S - 2) * 1000);
  expect(settled.stream.startedAt).toBeNull();
  // Nobody to record: the recorder never got its start signal.
  expect(settled.recording).toMatchObject({ status: 'failed', startedAt: null, sizeBytes: null });
  expect(settled.recording.error).toBeTruthy();
  expect(await egress.list({ activeOnly: true, room: stream.room })).toEqual([]);
  expect(Object.values(await used()).every((n) => n === 0)).toBe(true);
  return settled;
}

describe('a room-composite recording of a stream nobody joins', () => {
  let harness: ApiHarness;
  let worker: Child;

  beforeAll(async () => {
    harness = await startApiHarness(ENV, { egress: true });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-no-show-${Date.now()}.log`));
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await harness?.stop();
  });

  it('ends with the stream at the join timeout: the recording fails, its egress stops and the app holds nothing', async () => {
    const { stream, recording } = await noShow(harness.admin, harness.stack.config.livekit);
    expect(stream.endReason).toBe('room_finished');
    expect(recording.error).toBe('Start signal not received');
  }, 180_000);
});

/** LiveKit's webhooks go nowhere here (the API listens on another port): only the worker's sweeps see the ends. */
describe('the same, when LiveKit’s webhooks are lost', () => {
  let stack: TestStack;
  let api: NestFastifyApplication;
  let worker: INestApplicationContext;
  let admin: ApiClient;

  beforeAll(async () => {
    stack = await startStack({ egress: true, env: { ...ENV, TALLY_SWEEP_INTERVAL_S: '3600' } });
    const port = await freePort();
    api = await startApi({ ...stack.config, http: { ...stack.config.http, port } }, { logger: false });
    worker = await startWorker(stack.config, { logger: false });
    admin = new ApiClient(`http://127.0.0.1:${port}`, stack.adminKey);
  }, 180_000);

  afterAll(async () => {
    await worker?.close();
    await api?.close();
    await stack?.stop();
  });

  it('the sweep ends the stream nobody joined by its timeout, fails the recording from LiveKit’s egress list and frees both reservations', async () => {
    const { stream } = await noShow(admin, stack.config.livekit, async () => {
      expect((await admin.post('/v1/reconcile')).status).toBe(202);
    });
    expect(stream.endReason).toBe('join_timeout');
  }, 180_000);
});
