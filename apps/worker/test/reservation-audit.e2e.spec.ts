import type { INestApplicationContext } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import type { CameraView, CapacityView, HlsView, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { LivekitEgressClient } from '@tally/livekit';
import { waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { startWorker } from '../src/bootstrap.js';
import { sweepOnce } from './sweep.js';

describe('the reservation audit', () => {
  let sut: ApiHarness;
  let worker: INestApplicationContext;
  let prisma: PrismaClient;
  let redis: Redis;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    sut = await startApiHarness({ TALLY_SWEEP_INTERVAL_S: '3600' }, { egress: true });
    worker = await startWorker(sut.stack.config, { logger: false });
    prisma = createPrismaClient(sut.stack.config.databaseUrl);
    redis = new Redis(sut.stack.redis.url);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    redis?.disconnect();
    await prisma?.$disconnect();
    await worker?.close();
    await sut?.stop();
  });

  const capacity = async (query = ''): Promise<CapacityView> => (await sut.admin.get<CapacityView>(`/v1/capacity${query}`)).body;

  it('lists what holds every reservation, and releases those whose owners are gone in one sweep', async () => {
    const before = (await capacity()).total.reserved;
    const { app, client } = await createTenant(sut.admin, 'audited');
    const stream = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    publishers.push(await joinAndPublish(token.url, token.token));
    await waitFor('the stream to be live', async () =>
      (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.status === 'live' ? true : undefined,
    );
    const recording = await waitFor('a recording of the published tracks', async () => {
      const r = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
      return r.status === 201 ? r.body : undefined;
    });
    const hls = await waitFor('live HLS of the stream', async () => {
      const r = await client.post<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
      return r.status === 201 ? r.body : undefined;
    });
    const camera = (await client.post<CameraView>(`/v1/apps/${app.id}/cameras`, { name: 'door' })).body;
    // 60 s, as the other egress tests allow a start on a busy 2-core host.
    await waitFor(
      'the recording to be active',
      async () =>
        (await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${recording.id}`)).body.status === 'active' ? true : undefined,
      60_000,
    );

    const audit = (await capacity('?detail=reservations')).reservations ?? [];
    const mine = audit.filter((r) => r.appId === app.id);
    expect(mine.map((r) => [r.owner, r.resourceId, r.confirmed]).sort()).toEqual(
      [
        ['camera', camera.id, true],
        ['hls', hls.id, true],
        ['recording', recording.id, true],
        ['stream', stream.id, true],
      ].sort(),
    );
    expect(mine.find((r) => r.owner === 'recording')).toMatchObject({ kind: 'egress.track_composite', nodeId: sut.stack.nodeId, count: 1 });
    expect(Date.parse(mine[0]!.since)).toBeLessThanOrEqual(Date.now());
    expect((await capacity()).reservations).toBeUndefined();
    expect((await client.get('/v1/capacity?detail=reservations')).status).toBe(403);
    expect((await sut.admin.get('/v1/capacity?detail=everything')).status).toBe(400);

    // The owners vanish behind the ledger's back (a restore from backup, a manual cleanup).
    await prisma.$executeRaw`DELETE FROM "HlsSession" WHERE id = ${hls.id}`;
    await prisma.$executeRaw`DELETE FROM "Recording" WHERE id = ${recording.id}`;
    await prisma.$executeRaw`DELETE FROM "Camera" WHERE id = ${camera.id}`;
    await prisma.$executeRaw`UPDATE "Stream" SET status = 'ended', "endedAt" = now() WHERE id = ${stream.id}`;
    const counted = async (kind: string): Promise<number> => Number((await redis.hget('tally:metrics:repairs', kind)) ?? 0);
    const recordingsBefore = await counted('reservations.recording');
    const report = await sweepOnce(sut.admin, sut.stack.redis.url);

    const ledger = new CapacityLedger(redis);
    for (const id of [stream.id, recording.id, hls.id, camera.id]) expect(await ledger.held(id)).toBeUndefined();
    expect(report['reservations']).toMatchObject({ recording: 1, hls: 1 });
    expect(await counted('reservations.recording')).toBe(recordingsBefore + 1);
    const metrics = await (await fetch(`http://127.0.0.1:${sut.stack.config.http.port}/metrics`)).text();
    expect(metrics).toMatch(/tally_reconciler_repairs_total\{kind="reservations\.hls"\} 1/);
    expect((await capacity()).total.reserved).toEqual(before);
    // What ran for the vanished rows runs no more: the sweep stops both egresses as ghosts. One still
    // STARTING may not end at the first stop; the sweeps that follow (every TALLY_SWEEP_INTERVAL_S in
    // production) ask again, as these do.
    const egress = new LivekitEgressClient(sut.stack.config.livekit);
    await waitFor(
      'no egress left running in the room',
      async () => {
        const running = await egress.list({ activeOnly: true, room: stream.room });
        if (running.length === 0) return true;
        await new Promise((r) => setTimeout(r, 10_000));
        await sweepOnce(sut.admin, sut.stack.redis.url);
        return undefined;
      },
      180_000,
    );
  }, 300_000);
});
