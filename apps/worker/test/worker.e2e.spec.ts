import type { INestApplicationContext } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppView, StreamView } from '@tally/contracts';
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

  it('ends a stream whose room LiveKit lost while its webhook went nowhere, and releases its reservation', async () => {
    api = await startApi(stack.config, { logger: false });
    const admin = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`, stack.adminKey);
    const app = (await admin.post<AppView>('/v1/apps', { name: 'reconciled' })).body;
    const stream = (await admin.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'ghost' })).body;
    await api.close();
    api = undefined;
    await new LivekitRoomClient(stack.config.livekit).deleteRoom(stream.room);

    sut = await startWorker(stack.config, { logger: false });
    // On another port than LiveKit's webhook URL: LiveKit's retried room_finished never arrives.
    const elsewhere = await freePort();
    api = await startApi({ ...stack.config, http: { ...stack.config.http, port: elsewhere } }, { logger: false });
    reader = new ApiClient(`http://127.0.0.1:${elsewhere}`, stack.adminKey);

    // Sweeps are asked for (the schedule is hourly here); a stream is judged once it is 10 s old.
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
});
