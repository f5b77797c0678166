import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { CapacityLedger, type HeldReservation } from '@tally/admission';
import type {
  AppUsageView,
  AppView,
  CameraView,
  CapacityView,
  CreatedIngress,
  HlsView,
  IngressView,
  RecordingView,
  StreamToken,
  StreamView,
} from '@tally/contracts';
import { QUEUES } from '@tally/contracts';
import { NodeWorkers } from '@tally/nodes';
import { type ApiClient, pushRtmp, stopPush, waitFor } from '@tally/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { recordingIn } from '../../api/test/recording-client.js';
import { startWorker } from '../src/bootstrap.js';
import { sweepOnce } from './sweep.js';

/**
 * Redis is flushed under running work of every kind the stack runs here. LiveKit keeps its rooms,
 * egresses and ingresses in the same Redis (as install.sh configures it), so it forgets them too.
 */
describe('Redis losing its data', () => {
  let sut: ApiHarness;
  let worker: INestApplicationContext;
  let redis: Redis;
  let maintenance: Queue;
  const hlsDir = mkdtempSync(join(tmpdir(), 'tally-redis-loss-hls-'));
  const publishers: Publisher[] = [];
  const pushes: ChildProcess[] = [];

  beforeAll(async () => {
    sut = await startApiHarness({ TALLY_SWEEP_INTERVAL_S: '3600', TALLY_HLS_DIR: hlsDir }, { egress: true, ingress: true });
    worker = await startWorker(sut.stack.config, { logger: false });
    redis = new Redis(sut.stack.redis.url);
    maintenance = new Queue(QUEUES.maintenance, { connection: { url: sut.stack.redis.url, maxRetriesPerRequest: null } });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await Promise.all(pushes.map((p) => stopPush(p)));
    await maintenance?.close();
    redis?.disconnect();
    await worker?.close();
    await sut?.stop();
    rmSync(hlsDir, { recursive: true, force: true });
  });

  /** The pool as admission sees it; a disk's free space is the agent's live measurement (writers go on writing), its reservations are not. */
  const capacity = async (): Promise<CapacityView> => {
    const view = (await sut.admin.get<CapacityView>('/v1/capacity')).body;
    return {
      ...view,
      nodes: view.nodes.map((n) => ({
        ...n,
        disks: n.disks.map(({ freeBytes: _free, freeMb: _freeMb, admissibleMb: _admissible, ...disk }) => disk),
      })),
    } as CapacityView;
  };
  const usage = async (appId: string): Promise<AppUsageView> => (await sut.admin.get<AppUsageView>(`/v1/apps/${appId}/usage`)).body;
  const held = async (): Promise<Omit<HeldReservation, 'createdAt'>[]> =>
    (await new CapacityLedger(redis).list()).map(({ createdAt: _, ...r }) => r).sort((a, b) => a.id.localeCompare(b.id));

  const metrics = async (): Promise<string> => (await fetch(`http://127.0.0.1:${sut.stack.config.http.port}/metrics`)).text();

  async function record(client: ApiClient, appId: string, streamId: string, mode: string): Promise<RecordingView> {
    return waitFor(
      `a ${mode} recording`,
      async () => {
        const r = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${streamId}/recordings`, { mode });
        if (r.status !== 201) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
        return r.body;
      },
      60_000,
    );
  }

  it('restores every running thing in one sweep: usage and capacity match exactly, and nothing is ended', async () => {
    // An explicit cap (must not read as unlimited once Redis forgot it) and, on another app, a guarantee.
    const { app, client } = await createTenant(sut.admin, 'busy', { maxStreams: 2 });
    const guaranteed = await createTenant(sut.admin, 'guaranteed');
    expect((await sut.admin.patch<AppView>(`/v1/apps/${guaranteed.app.id}`, { guarantees: { maxStreams: 1 } })).status).toBe(200);

    const stream = await createStream(client, app.id, 'stage');
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    publishers.push(await joinAndPublish(token.url, token.token));
    await waitFor('the stream to be live', async () =>
      (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.status === 'live' ? true : undefined,
    );
    // One egress at a time, each waited for until active: a loaded host starts them one by one.
    const passthrough = await record(client, app.id, stream.id, 'passthrough');
    expect((await recordingIn(client, app.id, passthrough.id, ['active', 'failed'])).status).toBe('active');
    const ingestStream = await createStream(client, app.id, 'ingest');
    const ingress = (await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: ingestStream.id, kind: 'rtmp' })).body;
    pushes.push(pushRtmp(`${ingress.url}/${ingress.streamKey}`, 600));
    // The composite records the ingested stream: a track-composite started beside a passthrough
    // recording of the same WebRTC publisher can stay STARTING (docs/recordings.md), which is not
    // what this test is about.
    const composite = await record(client, app.id, ingestStream.id, 'track_composite');
    expect((await recordingIn(client, app.id, composite.id, ['active', 'failed'])).status).toBe('active');
    await waitFor('live HLS of the stream', async () => {
      const r = await client.post<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
      return r.status === 201 ? r.body : undefined;
    });
    const camera = await client.post<CameraView>(`/v1/apps/${app.id}/cameras`, { name: 'door' });
    expect(camera.status).toBe(201);

    // Everything runs and holds a confirmed reservation: what Redis holds is exactly what runs.
    const running = async (): Promise<true | undefined> => {
      const recordings = await Promise.all(
        [composite, passthrough].map(async (r) => (await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${r.id}`)).body.status),
      );
      const session = (await client.get<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body.status;
      const ingressStatus = (await client.get<IngressView>(`/v1/apps/${app.id}/ingresses/${ingress.id}`)).body.status;
      const reservations = (await held()).map((r) => `${r.kind}:${r.confirmed ? 'confirmed' : 'pending'}`);
      const state = { recordings, session, ingressStatus, reservations };
      const settled = reservations.length === 7 && reservations.every((r) => r.endsWith(':confirmed'));
      if (recordings.every((s) => s === 'active') && session === 'live' && ingressStatus === 'publishing' && settled) return true;
      // waitFor reports the last error when it times out: the state that was still missing.
      throw new Error(JSON.stringify(state));
    };
    // A sweep before the loss gives back what lapsed while an egress took long to start: the flush is then the only change.
    expect((await sweepOnce(sut.admin, sut.stack.redis.url))['redis']).toEqual({ dataLost: 0 });
    await waitFor('every workload to run with a confirmed reservation', running, 60_000);
    expect(await metrics()).toMatch(/tally_reconciler_repairs_total\{kind="redis\.dataLost"\} 0/);
    const before = { held: await held(), capacity: await capacity(), usage: await usage(app.id), other: await usage(guaranteed.app.id) };
    const retained = await new NodeWorkers(redis).retained(sut.stack.nodeId, 'ingress');
    expect(before.usage.items.find((i) => i.quota === 'maxStreams')).toMatchObject({ used: 2, limit: 2 });
    expect(before.capacity.guarantees.guaranteed.maxStreams).toBe(1);

    await redis.flushall();
    // Nobody asks for a sweep: the worker notices the loss and sweeps once a node heartbeats again.
    const report = await waitFor(
      'the sweep the worker started on noticing the loss',
      async () => {
        const jobs = await maintenance.getJobs(['completed', 'failed']);
        const job = jobs.find((j) => j.id?.startsWith('redis-loss-'));
        if (job?.failedReason) throw new Error(`sweep failed: ${job.failedReason}`);
        return job?.returnvalue as Record<string, Record<string, number>> | undefined;
      },
      60_000,
    );

    expect(report['redis']).toEqual({ dataLost: 1 });
    expect(await held()).toEqual(before.held);
    expect(await capacity()).toEqual(before.capacity);
    expect(await usage(app.id)).toEqual(before.usage);
    expect(await usage(guaranteed.app.id)).toEqual(before.other);
    expect(await new NodeWorkers(redis).retained(sut.stack.nodeId, 'ingress')).toBe(retained);
    // Nothing was ended for LiveKit having forgotten it.
    expect(await running()).toBe(true);
    expect((await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.status).toBe('live');
    expect((await client.get<CameraView>(`/v1/apps/${app.id}/cameras/${camera.body.id}`)).status).toBe(200);
    expect(await metrics()).toMatch(/tally_reconciler_repairs_total\{kind="redis\.dataLost"\} 1/);

    // The cap came back from Postgres: a third stream is refused, naming it.
    const third = await client.post<{ error: unknown }>(`/v1/apps/${app.id}/streams`, { name: 'third' });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams', limit: 2, used: 2, requested: 1 });

    // The next sweep finds the marker: no second loss is counted, and still nothing is ended.
    expect((await sweepOnce(sut.admin, sut.stack.redis.url))['redis']).toEqual({ dataLost: 0 });
    expect(await held()).toEqual(before.held);
    expect(await running()).toBe(true);
  }, 400_000);
});
