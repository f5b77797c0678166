import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MediumApi, startMediumApi } from '../../test/medium/medium-harness.js';
import { AppsService } from '../apps/apps.service.js';
import { LimitRefusedError, NotFoundError, UpstreamUnavailableError } from '../common/domain-error.js';
import { StreamLifecycle } from '@tally/streams';
import { StreamPresenceService } from './stream-presence.service.js';
import { StreamsService } from './streams.service.js';

describe(StreamsService.name, () => {
  let api: MediumApi;
  let sut: StreamsService;

  beforeAll(async () => {
    api = await startMediumApi();
    sut = api.get(StreamsService);
  });
  afterAll(() => api?.stop());

  const newApp = async (maxStreams?: number) => {
    const apps = api.get(AppsService);
    const app = await apps.create({ name: 'streams' });
    return maxStreams === undefined ? app : apps.update(app.id, { quotas: { maxStreams } }, { kind: 'admin' });
  };

  it('creates the LiveKit room only once something needs it, and refuses the stream over the app’s limit, naming it', async () => {
    const app = await newApp(1);

    const first = await sut.create(app.id, { name: 'one' });
    const refused = await sut.create(app.id, { name: 'two' }).catch((e: unknown) => e);

    expect(first).toMatchObject({ status: 'created', appId: app.id });
    expect(api.livekit.rooms.has(first.room)).toBe(false);
    await sut.roomReady(first.room);
    expect(api.livekit.rooms.has(first.room)).toBe(true);
    expect(refused).toBeInstanceOf(LimitRefusedError);
    expect((refused as LimitRefusedError).limit).toMatchObject({ resource: 'app.streams', limit: 1, used: 1 });
    expect((await sut.list(app.id, undefined)).map((s) => s.name)).toEqual(['one']);
  });

  it('gives the place back when a stream ends, so the next one fits', async () => {
    const app = await newApp(1);
    const first = await sut.create(app.id, { name: 'morning' });

    const ended = await sut.end(app.id, first.id);
    const next = await sut.create(app.id, { name: 'evening' });

    expect(ended.status).toBe('ended');
    expect(api.livekit.rooms.has(first.room)).toBe(false);
    expect(next.status).toBe('created');
  });

  it('ends a stream on DELETE with ended_by_api even when LiveKit’s room_finished arrives before deleteRoom returns', async () => {
    const app = await newApp();
    const stream = await sut.create(app.id, { name: 'raced' });
    const presence = api.get(StreamPresenceService);
    api.livekit.onRoomDeleted = (room) => presence.roomFinished(room);
    try {
      const ended = await sut.end(app.id, stream.id);

      expect(ended).toMatchObject({ status: 'ended', endReason: 'ended_by_api' });
    } finally {
      api.livekit.onRoomDeleted = undefined;
    }
  });

  it('ends a stream even when LiveKit cannot remove its room (the sweep removes it), and keeps its reason', async () => {
    const app = await newApp();
    const stream = await sut.create(app.id, { name: 'kept' });
    await sut.roomReady(stream.room);
    api.livekit.failNext('rooms');

    expect(await sut.end(app.id, stream.id)).toMatchObject({ status: 'ended', endReason: 'ended_by_api' });
    expect(api.livekit.rooms.has(stream.room)).toBe(true);
    await api.get(StreamPresenceService).roomFinished(stream.room);
    expect(await sut.get(app.id, stream.id)).toMatchObject({ status: 'ended', endReason: 'ended_by_api' });
  });

  it('removes a room whose stream ended while LiveKit was creating it, and refuses the caller with 409', async () => {
    const app = await newApp();
    const stream = await sut.create(app.id, { name: 'raced' });
    // Another replica ends it: its end marks the row ended (and removes the room) meanwhile.
    api.livekit.onRoomCreated = async () => void (await api.get(StreamLifecycle).markEnded(stream.id, new Date(), 'ended_by_api'));
    try {
      const refused = await sut.roomReady(stream.room).catch((e: unknown) => e);

      expect(refused).toMatchObject({ code: 'conflict', message: 'the stream has ended' });
      expect(api.livekit.rooms.has(stream.room)).toBe(false);
    } finally {
      api.livekit.onRoomCreated = undefined;
    }
  });

  it('keeps the stream open when LiveKit cannot create its room: that call answers 503 and the next one creates it', async () => {
    const app = await newApp(1);
    const stream = await sut.create(app.id, { name: 'unlucky' });
    api.livekit.failNext('rooms');

    const waited = await sut.roomReady(stream.room).catch((e: unknown) => e);

    expect(waited).toBeInstanceOf(UpstreamUnavailableError);
    expect(api.livekit.rooms.has(stream.room)).toBe(false);
    expect(await sut.get(app.id, stream.id)).toMatchObject({ status: 'created', endReason: null });
    await sut.roomReady(stream.room);
    expect(api.livekit.rooms.has(stream.room)).toBe(true);
  });

  it('hides another app’s stream as not found', async () => {
    const mine = await newApp();
    const theirs = await newApp();
    const stream = await sut.create(theirs.id, { name: 'secret' });

    await expect(sut.get(mine.id, stream.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
