import { dispose, TrackKind } from '@livekit/rtc-node';
import type { AppView, StreamToken, StreamView } from '@tally/contracts';
import { LivekitRoomClient } from '@tally/livekit';
import { mediaNodeIp, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import {
  disconnected,
  firstVideoFrame,
  joinAndPublish,
  joinAsViewer,
  type Publisher,
  tryPublishVideo,
  type Viewer,
} from '@tally/testing/media';

describe('a stream with real LiveKit clients', () => {
  let sut: ApiHarness;
  let publisher: Publisher | undefined;
  let viewer: Viewer | undefined;

  beforeAll(async () => {
    mediaNodeIp();
    sut = await startApiHarness();
  });
  afterAll(async () => {
    await publisher?.stop();
    await viewer?.room.disconnect().catch(() => undefined);
    await sut?.stop();
    await dispose();
  });

  it('goes live with a Tally-minted publisher token, serves a viewer, and ends for everyone', async () => {
    const { app, client } = await createTenant(sut.admin, 'broadcaster');
    const stream = await createStream(client, app.id, 'launch');
    const base = `/v1/apps/${app.id}/streams/${stream.id}`;
    const pubToken = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'host', role: 'publisher' })).body;
    const viewToken = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'fan-1', role: 'viewer' })).body;
    expect(stream.status).toBe('created');

    publisher = await joinAndPublish(pubToken.url, pubToken.token);
    const live = await waitFor('stream live with one publisher', async () => {
      const s = (await client.get<StreamView>(base)).body;
      return s.status === 'live' && s.publishers === 1 ? s : undefined;
    });
    expect(live.startedAt).not.toBeNull();

    viewer = await joinAsViewer(viewToken.url, viewToken.token);
    const tracks = await viewer.tracks;
    const video = tracks.find((t) => t.kind === TrackKind.KIND_VIDEO)!;
    expect(await firstVideoFrame(video)).toEqual({ width: 320, height: 240 });
    await expect(tryPublishVideo(viewer.room)).rejects.toThrow();
    await waitFor('two participants, one publisher', async () => {
      const s = (await client.get<StreamView>(base)).body;
      return s.participants === 2 && s.publishers === 1 ? s : undefined;
    });

    const gone = [disconnected(publisher.room), disconnected(viewer.room)];
    const ended = await client.delete<StreamView>(base);

    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ status: 'ended', endReason: 'ended_by_api' });
    await Promise.all(gone);
    expect((await client.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(0);
    expect((await client.post(`${base}/tokens`, { identity: 'late', role: 'viewer' })).status).toBe(409);
  });

  it('lets no kept token bring an ended stream back: LiveKit creates no room Tally did not admit', async () => {
    const { app, client } = await createTenant(sut.admin, 'rejoiner');
    const stream = await createStream(client, app.id, 'once');
    const base = `/v1/apps/${app.id}/streams/${stream.id}`;
    const kept = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'host', role: 'publisher' })).body;
    const first = await joinAndPublish(kept.url, kept.token);
    await waitFor('stream live', async () => ((await client.get<StreamView>(base)).body.status === 'live' ? true : undefined));
    const gone = disconnected(first.room);

    expect((await client.delete<StreamView>(base)).body.status).toBe('ended');
    await gone;
    await first.stop();

    await expect(joinAndPublish(kept.url, kept.token)).rejects.toThrow();
    expect(await new LivekitRoomClient(sut.stack.config.livekit).listRooms([stream.room])).toEqual([]);
    expect((await client.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(0);
    expect((await client.get<StreamView>(base)).body).toMatchObject({ status: 'ended', participants: 0 });
  });
});
