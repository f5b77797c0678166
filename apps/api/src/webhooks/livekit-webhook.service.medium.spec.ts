import { createHash, randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { StartHlsBody } from '@tally/contracts';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LIVEKIT_KEY, LIVEKIT_SECRET, type MediumApi, startMediumApi } from '../../test/medium/medium-harness.js';
import { AppWebhooksService } from '../app-webhooks/app-webhooks.service.js';
import { AppsService } from '../apps/apps.service.js';
import { DomainError } from '../common/domain-error.js';
import { HlsService } from '../hls/hls.service.js';
import { StreamsService } from '../streams/streams.service.js';
import { LivekitWebhookService } from './livekit-webhook.service.js';

/** A LiveKit webhook as livekit-server sends it: JSON body, a JWT over its sha256 in Authorization. */
async function signed(event: Record<string, unknown>): Promise<{ body: string; authorization: string }> {
  const body = JSON.stringify({ id: `EV_${randomBytes(6).toString('hex')}`, createdAt: String(Math.floor(Date.now() / 1000)), ...event });
  const token = new AccessToken(LIVEKIT_KEY, LIVEKIT_SECRET);
  token.sha256 = createHash('sha256').update(body).digest('base64');
  return { body, authorization: await token.toJwt() };
}

describe(LivekitWebhookService.name, () => {
  let api: MediumApi;
  let sut: LivekitWebhookService;

  beforeAll(async () => {
    // The receiver is on loopback, which webhook URLs may only name when the operator allows it.
    api = await startMediumApi({ TALLY_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' });
    sut = api.get(LivekitWebhookService);
  });
  afterAll(() => api?.stop());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const appWithStream = async () => {
    const apps = api.get(AppsService);
    const app = await apps.update((await apps.create({ name: 'events' })).id, { webhookUrl: 'http://127.0.0.1:9/hook' }, { kind: 'admin' });
    return { appId: app.id, stream: await api.get(StreamsService).create(app.id, { name: 'show' }) };
  };

  it('turns the stream live on a signed participant_joined and queues the app’s stream.live event once', async () => {
    const { appId, stream } = await appWithStream();
    api.livekit.publish(stream.room);
    const joined = await signed({ event: 'participant_joined', room: { name: stream.room }, participant: { identity: 'publisher' } });

    await sut.receive(joined.body, joined.authorization);
    await sut.receive(joined.body, joined.authorization);

    expect(await api.get(StreamsService).get(appId, stream.id)).toMatchObject({ status: 'live', publishers: 1 });
    const deliveries = await api.get(AppWebhooksService).listDeliveries(appId, { limit: 100 });
    expect(deliveries.map((d) => d.eventType)).toEqual(['stream.live']);
    expect(deliveries[0]).toMatchObject({ url: 'http://127.0.0.1:9/hook' });
  });

  it('keeps counting a publisher that rejoined when its old session’s participant_left arrives after the join', async () => {
    const { appId, stream } = await appWithStream();
    // The old session (PA_old) is gone from LiveKit's list; the same identity is back as PA_new.
    api.livekit.publish(stream.room, 'camera', 'PA_new');
    const rejoined = await signed({
      event: 'participant_joined',
      room: { name: stream.room },
      participant: { identity: 'camera', sid: 'PA_new' },
    });
    await sut.receive(rejoined.body, rejoined.authorization);
    const oldLeft = await signed({
      event: 'participant_left',
      room: { name: stream.room },
      participant: { identity: 'camera', sid: 'PA_old' },
    });

    await sut.receive(oldLeft.body, oldLeft.authorization);

    expect(await api.get(StreamsService).get(appId, stream.id)).toMatchObject({ status: 'live', publishers: 1, participants: 1 });
    // The new session leaving, while LiveKit still lists it, takes it out of the counts.
    const newLeft = await signed({
      event: 'participant_left',
      room: { name: stream.room },
      participant: { identity: 'camera', sid: 'PA_new' },
    });
    await sut.receive(newLeft.body, newLeft.authorization);
    expect(await api.get(StreamsService).get(appId, stream.id)).toMatchObject({ publishers: 0, participants: 0 });
  });

  it('refuses an unsigned or tampered body before reading it', async () => {
    const { appId, stream } = await appWithStream();
    api.livekit.publish(stream.room);
    const joined = await signed({ event: 'participant_joined', room: { name: stream.room } });

    const unsigned = await sut.receive(joined.body, undefined).catch((e: unknown) => e);
    const tampered = await sut
      .receive(joined.body.replace('participant_joined', 'room_finished'), joined.authorization)
      .catch((e: unknown) => e);

    expect(unsigned).toBeInstanceOf(DomainError);
    expect(unsigned).toMatchObject({ code: 'unauthorized' });
    expect(tampered).toMatchObject({ code: 'unauthorized' });
    expect((await api.get(StreamsService).get(appId, stream.id)).status).toBe('created');
  });

  it('ends the stream and gives its place back on room_finished', async () => {
    const { appId, stream } = await appWithStream();
    api.livekit.publish(stream.room);
    const joined = await signed({ event: 'participant_joined', room: { name: stream.room } });
    await sut.receive(joined.body, joined.authorization);
    api.livekit.rooms.delete(stream.room);
    const finished = await signed({ event: 'room_finished', room: { name: stream.room } });

    await sut.receive(finished.body, finished.authorization);

    expect((await api.get(StreamsService).get(appId, stream.id)).status).toBe('ended');
    const events = (await api.get(AppWebhooksService).listDeliveries(appId, { limit: 100 })).map((d) => d.eventType);
    expect(events.sort()).toEqual(['stream.ended', 'stream.live']);
  });

  it('leaves the stream live on the room_finished of a copy of its room while LiveKit lists its publisher in the other', async () => {
    const { appId, stream } = await appWithStream();
    api.livekit.publish(stream.room);
    const joined = await signed({ event: 'participant_joined', room: { name: stream.room } });
    await sut.receive(joined.body, joined.authorization);
    const finished = await signed({ event: 'room_finished', room: { name: stream.room } });

    await sut.receive(finished.body, finished.authorization);

    expect(await api.get(StreamsService).get(appId, stream.id)).toMatchObject({ status: 'live', publishers: 1 });
    // Once LiveKit lists no one, the next room_finished ends it.
    api.livekit.rooms.delete(stream.room);
    const again = await signed({ event: 'room_finished', room: { name: stream.room } });
    await sut.receive(again.body, again.authorization);
    expect((await api.get(StreamsService).get(appId, stream.id)).status).toBe('ended');
  });

  it('takes the egress events of an HLS session as expected, and warns only of an egress nothing in Tally started', async () => {
    const { appId, stream } = await appWithStream();
    api.livekit.publish(stream.room);
    const started = await api.get(HlsService).start(appId, stream.id, StartHlsBody.parse({}));
    const session = await api.prisma.hlsSession.findUniqueOrThrow({ where: { id: started.id } });
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    // As egress reports a one-publisher HLS session: a track-composite writing the session's playlist.
    const egressInfo = (egressId: string, dir: string) => ({
      egressId,
      roomName: stream.room,
      status: 'EGRESS_ACTIVE',
      trackComposite: { roomName: stream.room, segmentOutputs: [{ playlistName: `${dir}/index.m3u8` }] },
    });
    const hls = await signed({ event: 'egress_started', egressInfo: egressInfo(session.egressId ?? '', session.dir) });
    const unknown = await signed({
      event: 'egress_started',
      egressInfo: egressInfo('EG_notTallys00000', session.dir.replace(session.id, 'hls_0000000000000000')),
    });

    await sut.receive(hls.body, hls.authorization);
    await sut.receive(unknown.body, unknown.authorization);

    const warned = warnings.mock.calls.map(([message]) => String(message));
    expect(warned.filter((m) => m.includes(session.egressId ?? 'none'))).toEqual([]);
    expect(warned.filter((m) => m.includes('EG_notTallys00000'))).toEqual([
      'egress_started for egress EG_notTallys00000, which no recording or HLS session started',
    ]);
  });
});
