import type { INestApplicationContext } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Room } from '@livekit/rtc-node';
import type { AppUsageView, AppView, CapacityView, CreatedCamera, StreamToken, StreamView } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { CapacityLedger } from '@tally/admission';
import { LivekitRoomClient } from '@tally/livekit';
import { ApiClient, freePort, startStack, type TestStack, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../../api/src/bootstrap.js';
import { startWorker } from '../src/bootstrap.js';

describe('worker', () => {
  let stack: TestStack;
  let api: NestFastifyApplication | undefined;
  let sut: INestApplicationContext | undefined;
  /** The API, on a port LiveKit's webhooks do not reach (so only the worker can repair). */
  let reader: ApiClient;

  beforeAll(async () => {
    stack = await startStack({ env: { TALLY_SWEEP_INTERVAL_S: '3600' } });
  });
  afterAll(async () => {
    await sut?.close();
    await api?.close();
    await stack?.stop();
  });

  it('ends a live stream whose room LiveKit lost while its webhook went nowhere, and releases its reservation', async () => {
    api = await startApi(stack.config, { logger: false });
    const admin = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`, stack.adminKey);
    const app = (await admin.post<AppView>('/v1/apps', { name: 'reconciled' })).body;
    const stream = (await admin.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'ghost' })).body;
    const token = (await admin.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'guest', role: 'viewer' }))
      .body;
    const guest = new Room();
    await guest.connect(token.url, token.token, { autoSubscribe: false, dynacast: false });
    await waitFor('the stream to go live', async () =>
      (await admin.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.status === 'live' ? true : undefined,
    );
    await api.close();
    api = undefined;
    await new LivekitRoomClient(stack.config.livekit).deleteRoom(stream.room);
    await guest.disconnect().catch(() => undefined);

    sut = await startWorker(stack.config, { logger: false });
    // On another port than LiveKit's webhook URL: LiveKit's retried room_finished never arrives.
    const elsewhere = await freePort();
    api = await startApi({ ...stack.config, http: { ...stack.config.http, port: elsewhere } }, { logger: false });
    reader = new ApiClient(`http://127.0.0.1:${elsewhere}`, stack.adminKey);

    // Sweeps are asked for (the schedule is hourly here); a stream is judged once it has been live for 10 s.
    let askedAt = 0;
    const ended = await waitFor(
      'a sweep to end the stream',
      async () => {
        if (Date.now() - askedAt > 1_000) {
          askedAt = Date.now();
          expect((await reader.post('/v1/reconcile')).status).toBe(202);
        }
        const s = (await reader.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body;
        return s.status === 'ended' ? s : undefined;
      },
      45_000,
    );
    expect(ended.endReason).toBe('room_gone');
    expect((await reader.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(0);
  });

  it('gives an open stream back the reservation Redis lost, within a sweep', async () => {
    const app = (await reader.post<AppView>('/v1/apps', { name: 'restored' })).body;
    const stream = (await reader.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'kept' })).body;
    const redis = new Redis(stack.redis.url);
    try {
      expect(await new CapacityLedger(redis).release(stream.id)).toBe(true);
      expect((await reader.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(0);

      expect((await reader.post<{ jobId: string }>('/v1/reconcile')).status).toBe(202);
      await waitFor('the sweep asked for to restore the reservation', async () =>
        (await reader.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams === 1 ? true : undefined,
      );
    } finally {
      redis.disconnect();
    }
    expect((await reader.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.status).toBe('created');
  });

  it("frees a deleted camera's place and gives a camera that lost its reservation its place back, counting both", async () => {
    const app = (await reader.post<AppView>('/v1/apps', { name: 'cameras' })).body;
    const reservedNic = async () => (await reader.get<CapacityView>('/v1/capacity')).body.total.reserved.nicKbps;
    const camerasUsed = async () =>
      (await reader.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body.items.find((i) => i.quota === 'maxCameras')?.used;
    const nicBefore = await reservedNic();
    const create = async (name: string, maxFrameKb: number) =>
      (await reader.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name, maxFps: 8, maxFrameKb })).body;
    const deleted = await create('deleted', 64);
    const kept = await create('kept', 8);
    const redis = new Redis(stack.redis.url);
    const prisma = new PrismaService(stack.config.databaseUrl);
    const counted = async () => {
      const h = await redis.hgetall('tally:metrics:repairs');
      return { freed: Number(h['cameras.reservationsFreed'] ?? 0), restored: Number(h['cameras.reservationsRestored'] ?? 0) };
    };
    try {
      const before = await counted();
      // A delete that died after marking the row, and a create that died before confirming (its reservation lapsed).
      await prisma.camera.update({ where: { id: deleted.id }, data: { deletedAt: new Date(Date.now() - 60_000) } });
      const ledger = new CapacityLedger(redis);
      expect(await ledger.release(kept.id)).toBe(true);
      expect(await reservedNic()).toBe(nicBefore + deleted.bitrateKbps);

      expect((await reader.post<{ jobId: string }>('/v1/reconcile')).status).toBe(202);
      await waitFor('the sweep asked for to repair both cameras', async () =>
        (await reservedNic()) === nicBefore + kept.bitrateKbps ? true : undefined,
      );
      expect(await camerasUsed()).toBe(1);
      expect(await ledger.held(deleted.id)).toBeUndefined();
      expect(await ledger.held(kept.id)).toMatchObject({ confirmed: true, kind: 'camera.mjpeg' });
      expect(await counted()).toEqual({ freed: before.freed + 1, restored: before.restored + 1 });
    } finally {
      redis.disconnect();
      await prisma.$disconnect();
    }
  });
});
