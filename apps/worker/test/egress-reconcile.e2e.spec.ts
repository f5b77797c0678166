import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppView, HlsView, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { CapacityLedger } from '@tally/admission';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { LivekitEgressClient, LivekitRoomClient } from '@tally/livekit';
import { EgressStopRequests } from '@tally/runtime';
import { ApiClient, freePort, startStack, type TestStack, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { startApi } from '../../api/src/bootstrap.js';
import { startWorker } from '../src/bootstrap.js';

/**
 * LiveKit's webhooks go nowhere here (the API listens on another port), so only the worker's
 * sweeps, asked for through POST /v1/reconcile, can move recordings along.
 */
describe('recordings reconciled with the egresses LiveKit lists', () => {
  let stack: TestStack;
  let api: NestFastifyApplication;
  let worker: INestApplicationContext;
  let admin: ApiClient;
  let prisma: PrismaClient;
  let redis: Redis;
  let egress: LivekitEgressClient;
  const publishers: Publisher[] = [];
  const hlsDir = mkdtempSync(join(tmpdir(), 'tally-reconcile-hls-'));

  beforeAll(async () => {
    stack = await startStack({ egress: true, env: { TALLY_SWEEP_INTERVAL_S: '3600', TALLY_HLS_DIR: hlsDir } });
    const port = await freePort();
    api = await startApi({ ...stack.config, http: { ...stack.config.http, port } }, { logger: false });
    worker = await startWorker(stack.config, { logger: false });
    admin = new ApiClient(`http://127.0.0.1:${port}`, stack.adminKey);
    prisma = createPrismaClient(stack.config.databaseUrl);
    redis = new Redis(stack.redis.url);
    egress = new LivekitEgressClient(stack.config.livekit);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    redis?.disconnect();
    await prisma?.$disconnect();
    await worker?.close();
    await api?.close();
    await stack?.stop();
    rmSync(hlsDir, { recursive: true, force: true });
  });

  async function publishingStream(appId: string): Promise<StreamView> {
    const stream = (await admin.post<StreamView>(`/v1/apps/${appId}/streams`, { name: 'swept' })).body;
    const token = (await admin.post<StreamToken>(`/v1/apps/${appId}/streams/${stream.id}/tokens`, { identity: 'cam', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token));
    return stream;
  }

  /** Asks for sweeps until the recording is in one of the statuses. */
  async function sweptTo(appId: string, id: string, statuses: RecordingView['status'][]): Promise<RecordingView> {
    let askedAt = 0;
    return waitFor(
      `sweeps to bring ${id} to ${statuses.join(' or ')}`,
      async () => {
        if (Date.now() - askedAt > 2_000) {
          askedAt = Date.now();
          expect((await admin.post('/v1/reconcile')).status).toBe(202);
        }
        const r = (await admin.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
        return statuses.includes(r.status) ? r : undefined;
      },
      90_000,
    );
  }

  it('takes a recording through active to complete from LiveKit’s egress list alone', async () => {
    const app = (await admin.post<AppView>('/v1/apps', { name: 'no-webhooks' })).body;
    const stream = await publishingStream(app.id);
    const started = await waitFor('the publisher’s tracks', async () => {
      const r = await admin.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
      return r.status === 201 ? r.body : undefined;
    });
    const active = await sweptTo(app.id, started.id, ['active']);
    expect((await new CapacityLedger(redis).held(active.id))?.confirmed).toBe(true);
    await new Promise((r) => setTimeout(r, 3_000));
    await publishers.pop()?.stop();
    const complete = await sweptTo(app.id, active.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null });
    expect(complete.durationS).toBeGreaterThan(2);
    expect(await new CapacityLedger(redis).held(active.id)).toBeUndefined();
  }, 150_000);

  it('fails a recording whose egress LiveKit no longer knows, with that reason', async () => {
    const app = (await admin.post<AppView>('/v1/apps', { name: 'vanished' })).body;
    const stream = await publishingStream(app.id);
    const started = await waitFor('the publisher’s tracks', async () => {
      const r = await admin.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
      return r.status === 201 ? r.body : undefined;
    });
    // The row points at an egress LiveKit never had, as after a LiveKit store loss; old enough to judge.
    const real = (await prisma.recording.findUniqueOrThrow({ where: { id: started.id } })).egressId ?? '';
    await prisma.recording.update({
      where: { id: started.id },
      data: { egressId: 'EG_vanished00000', createdAt: new Date(Date.now() - 120_000) },
    });
    const failed = await sweptTo(app.id, started.id, ['failed']);
    expect(failed.error).toBe('egress vanished: LiveKit no longer knows it');
    expect(await new CapacityLedger(redis).held(started.id)).toBeUndefined();
    // The real egress now belongs to no open recording: the same sweeps stop it as a ghost.
    await waitFor('the ghost egress to stop', async () => {
      const [info] = await egress.list({ activeOnly: false, room: stream.room });
      return info && info.egressId === real && !['starting', 'active'].includes(info.state) ? info : undefined;
    });
  }, 150_000);

  it('stops an egress started behind Tally’s back in one of its rooms', async () => {
    const app = (await admin.post<AppView>('/v1/apps', { name: 'ghosts' })).body;
    const stream = await publishingStream(app.id);
    const tracks = await waitFor('published tracks', async () => {
      const [p] = await new LivekitRoomClient(stack.config.livekit).listParticipants(stream.room);
      return p && p.tracks.length === 2 ? p.tracks : undefined;
    });
    const ghost = await egress.start(
      { mode: 'track', room: stream.room, trackSid: tracks.find((t) => t.kind === 'audio')?.sid ?? '' },
      { kind: 'file', path: `/tmp/tally-ghost-${Date.now()}.ogg` },
    );
    let askedAt = 0;
    await waitFor(
      'a sweep to stop the ghost',
      async () => {
        if (Date.now() - askedAt > 2_000) {
          askedAt = Date.now();
          await admin.post('/v1/reconcile');
        }
        const [info] = await egress.list({ activeOnly: false, room: stream.room });
        return info && info.egressId === ghost.egressId && !['starting', 'active'].includes(info.state) ? true : undefined;
      },
      60_000,
    );
  }, 120_000);

  it('leaves to finish the egresses the API asked to stop (a recording stop, an HLS stop): the sweeps see those stops', async () => {
    const app = (await admin.post<AppView>('/v1/apps', { name: 'api-stops' })).body;
    const stream = await publishingStream(app.id);
    const started = await waitFor('the publisher’s tracks', async () => {
      const r = await admin.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
      return r.status === 201 ? r.body : undefined;
    });
    await sweptTo(app.id, started.id, ['active']);
    const recordingEgress = (await prisma.recording.findUniqueOrThrow({ where: { id: started.id } })).egressId ?? '';
    expect((await admin.post<RecordingView>(`/v1/apps/${app.id}/recordings/${started.id}/stop`)).status).toBe(200);
    expect(await sweptTo(app.id, started.id, ['complete', 'failed'])).toMatchObject({ status: 'complete', error: null });

    const hls = await admin.post<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
    expect(hls.status).toBe(201);
    const hlsEgress = (await prisma.hlsSession.findUniqueOrThrow({ where: { id: hls.body.id } })).egressId ?? '';
    expect((await admin.delete<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body.status).toBe('stopped');

    // What the worker's egress reconciler reads before stopping an egress it takes for a ghost.
    expect(await worker.get(EgressStopRequests).pending([recordingEgress, hlsEgress, 'EG_neverStopped0'])).toEqual(
      new Set([recordingEgress, hlsEgress]),
    );
  }, 150_000);
});
