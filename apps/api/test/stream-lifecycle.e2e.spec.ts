import type { INestApplicationContext } from '@nestjs/common';
import type { AppView, StreamToken, StreamView } from '@tally/contracts';
import { LivekitRoomClient } from '@tally/livekit';
import { waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../worker/src/bootstrap.js';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

const JOIN_TIMEOUT_S = 10;

describe('stream lifecycle driven by LiveKit', () => {
  let sut: ApiHarness;
  let worker: INestApplicationContext | undefined;

  beforeAll(async () => {
    sut = await startApiHarness({ TALLY_STREAM_JOIN_TIMEOUT_S: String(JOIN_TIMEOUT_S), TALLY_SWEEP_INTERVAL_S: '2' });
  });
  afterAll(async () => {
    await worker?.close();
    await sut?.stop();
  });

  it('ends a stream whose tokens nobody used when LiveKit closes its room, and releases its reservation', async () => {
    const { app, client } = await createTenant(sut.admin, 'no-shows', { maxStreams: 1 });
    const stream = await createStream(client, app.id);
    expect((await client.post(`/v1/apps/${app.id}/streams`, { name: 'second' })).status).toBe(429);
    // The first token creates the room (LiveKit closes it when nobody joined it within the join timeout).
    expect(
      (await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'x', role: 'viewer' })).status,
    ).toBe(201);
    expect((await new LivekitRoomClient(sut.stack.config.livekit).listRooms([stream.room])).map((r) => r.name)).toEqual([stream.room]);

    const ended = await waitFor(
      'room_finished to end the stream',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body;
        return s.status === 'ended' ? s : undefined;
      },
      45_000,
    );

    expect(ended.endReason).toBe('room_finished');
    expect((await client.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(0);
    expect((await client.post(`/v1/apps/${app.id}/streams`, { name: 'third' })).status).toBe(201);
  });

  it('creates no LiveKit room for a stream nobody asked a token for, and the sweep ends it at its join timeout', async () => {
    const { app, client } = await createTenant(sut.admin, 'untouched', { maxStreams: 1 });
    const stream = await createStream(client, app.id);
    expect(await new LivekitRoomClient(sut.stack.config.livekit).listRooms([stream.room])).toEqual([]);
    worker = await startWorker(sut.stack.config, { logger: false });

    const ended = await waitFor(
      'the sweep to end the stream',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body;
        return s.status === 'ended' ? s : undefined;
      },
      45_000,
    );

    expect(ended.endReason).toBe('join_timeout');
    expect(Date.parse(ended.endedAt ?? '') - Date.parse(stream.createdAt)).toBeGreaterThanOrEqual(JOIN_TIMEOUT_S * 1000);
    expect((await client.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(0);
    expect((await client.post(`/v1/apps/${app.id}/streams`, { name: 'next' })).status).toBe(201);
  });

  it('lists streams by status and keeps them apart per app', async () => {
    const a = await createTenant(sut.admin, 'lister-a');
    const b = await createTenant(sut.admin, 'lister-b');
    const mine = await createStream(a.client, a.app.id, 'mine');
    await createStream(b.client, b.app.id, 'theirs');

    const created = await a.client.get<{ items: StreamView[] }>(`/v1/apps/${a.app.id}/streams?status=created`);
    expect(created.body.items.map((s) => s.id)).toEqual([mine.id]);
    expect(mine.room).toBe(`${a.app.id}.${mine.id}`);
    expect((await a.client.get(`/v1/apps/${a.app.id}/streams?status=bogus`)).status).toBe(400);
    expect((await b.client.get(`/v1/apps/${b.app.id}/streams/${mine.id}`)).status).toBe(404);
    expect((await b.client.delete(`/v1/apps/${a.app.id}/streams/${mine.id}`)).status).toBe(404);
  });
});
