import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import type { CameraView, CapacityView, CreatedIngress, HlsView, RecordingView, StreamToken } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { LivekitEgressClient, LivekitIngressClient, LivekitRoomClient } from '@tally/livekit';
import { waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { startWorker } from '../src/bootstrap.js';
import { sweepOnce } from './sweep.js';

type Totals = CapacityView['total']['reserved'];

/** Longer than any sweep here takes on a loaded host; the test moves the deletion back in time instead of waiting. */
const RETENTION_S = 3600;

describe('deleting an app', () => {
  let sut: ApiHarness;
  let worker: INestApplicationContext;
  let prisma: PrismaClient;
  let redis: Redis;
  const hlsDir = mkdtempSync(join(tmpdir(), 'tally-teardown-hls-'));
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    sut = await startApiHarness(
      { TALLY_SWEEP_INTERVAL_S: '3600', TALLY_APP_RETENTION_S: String(RETENTION_S), TALLY_HLS_DIR: hlsDir },
      { egress: true, ingress: true },
    );
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
    rmSync(hlsDir, { recursive: true, force: true });
  });

  const reserved = async (): Promise<Totals> => (await sut.admin.get<CapacityView>('/v1/capacity')).body.total.reserved;

  it('stops everything it runs and gives the pool back what it held in one sweep, then deletes its files', async () => {
    const before = await reserved();
    const { app, client } = await createTenant(sut.admin, 'doomed');
    const stream = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    publishers.push(await joinAndPublish(token.url, token.token));
    const recording = await waitFor(
      'a recording of the published tracks',
      async () => {
        const r = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
        if (r.status !== 201) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
        return r.body;
      },
      60_000,
    );
    const hls = await waitFor('live HLS of the stream', async () => {
      const r = await client.post<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
      return r.status === 201 ? r.body : undefined;
    });
    const ingress = await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'whip' });
    expect(ingress.status).toBe(201);
    expect((await client.post<CameraView>(`/v1/apps/${app.id}/cameras`, { name: 'door' })).status).toBe(201);
    const egress = new LivekitEgressClient(sut.stack.config.livekit);
    const running = await waitFor('the recording and HLS egresses to run', async () => {
      const active = await egress.list({ activeOnly: true, room: stream.room });
      return active.length === 2 ? active : undefined;
    });
    expect((await reserved()).ramMb).toBeGreaterThan(before.ramMb);

    expect((await sut.admin.delete(`/v1/apps/${app.id}`)).status).toBe(204);
    expect((await sut.admin.get(`/v1/apps/${app.id}`)).status).toBe(404);
    expect((await sut.admin.get(`/v1/apps/${app.id}/recordings/${recording.id}`)).status).toBe(404);
    expect((await client.get(`/v1/apps/${app.id}/streams`)).status).toBe(401);
    await sweepOnce(sut.admin, sut.stack.redis.url);

    expect(await reserved()).toEqual(before);
    expect((await new CapacityLedger(redis).list()).filter((r) => r.appId === app.id)).toEqual([]);
    // The ingress at least was left for the worker (the API ends streams and cameras itself), and counted.
    expect(Number(await redis.hget('tally:metrics:repairs', 'apps.workStopped'))).toBeGreaterThanOrEqual(1);
    // LiveKit drops a deleted room once its last participant (an egress leaving) is gone.
    const rooms = new LivekitRoomClient(sut.stack.config.livekit);
    await waitFor('the room to be gone', async () => ((await rooms.listRooms([stream.room])).length === 0 ? true : undefined), 30_000);
    expect(await new LivekitIngressClient(sut.stack.config.livekit).list({ room: stream.room })).toEqual([]);
    await waitFor(
      'both egresses to end',
      async () => {
        const all = await egress.list({ activeOnly: false, room: stream.room });
        const ids = new Set(running.map((e) => e.egressId));
        const ended = all.filter((e) => ids.has(e.egressId) && !['starting', 'active', 'ending'].includes(e.state));
        return ended.length === 2 ? ended : undefined;
      },
      60_000,
    );
    // Ended with its room (complete, or failed when LiveKit reports the egress cut short) or by the
    // sweep (failed, stopped): either way nothing of it runs.
    expect(['complete', 'failed']).toContain((await prisma.recording.findUniqueOrThrow({ where: { id: recording.id } })).status);
    expect(['stopped', 'failed']).toContain((await prisma.hlsSession.findUniqueOrThrow({ where: { id: hls.id } })).status);
    expect((await prisma.ingress.findFirstOrThrow({ where: { appId: app.id } })).status).toBe('ended');

    // Kept for the retention period, then the first sweep after it deletes the files and the rows.
    expect(await prisma.app.findUnique({ where: { id: app.id } })).not.toBeNull();
    await prisma.app.update({ where: { id: app.id }, data: { deletedAt: new Date(Date.now() - RETENTION_S * 1000) } });
    await sweepOnce(sut.admin, sut.stack.redis.url);

    expect(await prisma.app.findUnique({ where: { id: app.id } })).toBeNull();
    expect(await prisma.recording.count({ where: { appId: app.id } })).toBe(0);
    const recordingsDir = sut.stack.config.recordings.dir;
    expect(existsSync(join(recordingsDir, app.id))).toBe(false);
    expect(existsSync(join(recordingsDir, '.incoming', app.id))).toBe(false);
    expect(existsSync(join(hlsDir, app.id))).toBe(false);
    expect(await reserved()).toEqual(before);
  }, 300_000);

  it('keeps other apps and their work untouched', async () => {
    const { app: kept, client } = await createTenant(sut.admin, 'kept');
    const stream = await createStream(client, kept.id);
    const { app: gone } = await createTenant(sut.admin, 'gone');

    expect((await sut.admin.delete(`/v1/apps/${gone.id}`)).status).toBe(204);
    expect((await sut.admin.delete(`/v1/apps/${gone.id}`)).status).toBe(404);
    await sweepOnce(sut.admin, sut.stack.redis.url);

    expect((await client.get<{ status: string }>(`/v1/apps/${kept.id}/streams/${stream.id}`)).body.status).toBe('created');
    expect(await new CapacityLedger(redis).held(stream.id)).toBeDefined();
    expect((await sut.admin.get<{ items: { id: string }[] }>('/v1/apps')).body.items.map((a) => a.id)).not.toContain(gone.id);
  }, 120_000);
});
