import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispose, TrackKind } from '@livekit/rtc-node';
import type { CameraToken, CreatedCamera, CreatedIngress, HlsView } from '@tally/contracts';
import { pushRtmp, stopPush, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateJpegs, TestCamera } from '@tally/testing/camera';
import { firstVideoFrame, joinAndPublish, joinAsViewer, type Publisher, tracksUp, type Viewer } from '@tally/testing/media';
import { publishWhip, type WhipPublisher } from '../../apps/api/test/whip-client.js';
import {
  createStream,
  createTenant,
  decodes,
  type Installed,
  installed,
  probe,
  streamLive,
  streamToken,
  type Tenant,
} from './installed.js';

/** The media segments a playlist lists, in order. */
function segments(playlist: string): string[] {
  return playlist
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

describe('an installed node: RTMP and WHIP in, live HLS out, ws-mjpeg cameras', () => {
  let node: Installed;
  let tenant: Tenant;
  const pushes: ChildProcess[] = [];
  const publishers: Publisher[] = [];
  const whips: WhipPublisher[] = [];
  const viewers: Viewer[] = [];

  beforeAll(async () => {
    node = installed();
    tenant = await createTenant(node.admin, 'acceptance ingest');
  });

  afterAll(async () => {
    await Promise.all([
      ...pushes.map((p) => stopPush(p)),
      ...publishers.map((p) => p.stop()),
      ...whips.map((w) => w.stop()),
      ...viewers.map((v) => v.room.disconnect().catch(() => undefined)),
    ]);
    if (tenant) await node.admin.delete(`/v1/apps/${tenant.app.id}`);
    await dispose();
  });

  it('an RTMP push with ffmpeg to the URL and key Tally hands out makes the stream live', async () => {
    const stream = await createStream(tenant, 'studio feed');
    const created = await tenant.client.post<CreatedIngress>(`/v1/apps/${tenant.app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.url).toMatch(new RegExp(`^rtmp://${node.nodeIp.replaceAll('.', '\\.')}:\\d+/x$`));

    // One push, no reconnects: the ingress the agent runs takes every session Tally admitted, however
    // busy the host (libs/capacity INGRESS_CPU_COST).
    pushes.push(pushRtmp(`${created.body.url}/${created.body.streamKey}`, 180));
    await streamLive(tenant, stream.id, 1, 120_000);

    expect((await tenant.client.delete(`/v1/apps/${tenant.app.id}/ingresses/${created.body.id}`)).status).toBe(204);
  });

  it('a WHIP publish from a browser to the URL and key Tally hands out makes the stream live; a viewer gets its video and audio', async () => {
    const stream = await createStream(tenant, 'browser feed');
    const created = await tenant.client.post<CreatedIngress>(`/v1/apps/${tenant.app.id}/ingresses`, { streamId: stream.id, kind: 'whip' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ kind: 'whip', transcode: false });
    expect(created.body.url).toMatch(new RegExp(`^http://${node.nodeIp.replaceAll('.', '\\.')}:\\d+/w$`));

    const whip = await publishWhip(created.body.url, created.body.streamKey);
    whips.push(whip);
    await whip.connected();
    await streamLive(tenant, stream.id, 1, 120_000);

    const token = await streamToken(tenant, stream.id, 'viewer', 'fan');
    const viewer = await joinAsViewer(token.url, token.token);
    viewers.push(viewer);
    const video = (await viewer.tracks).find((t) => t.kind === TrackKind.KIND_VIDEO);
    expect(video).toBeDefined();
    expect((await firstVideoFrame(video!)).width).toBeGreaterThan(0);
    expect([...viewer.room.remoteParticipants.values()].map((p) => p.identity)).toEqual([`ingress-${created.body.id}`]);

    expect((await tenant.client.delete(`/v1/apps/${tenant.app.id}/ingresses/${created.body.id}`)).status).toBe(204);
  });

  it('serves a live stream as HLS whose playlist lists segments that play', async () => {
    const stream = await createStream(tenant, 'hls');
    const token = await streamToken(tenant, stream.id, 'publisher', 'host');
    publishers.push(await joinAndPublish(token.url, token.token));
    await streamLive(tenant, stream.id);
    await tracksUp(tenant.client, tenant.app.id, stream.id);

    const started = await waitFor(
      'HLS to start (LiveKit lists the tracks a moment after the join)',
      async () => {
        const r = await tenant.client.post<HlsView>(`/v1/apps/${tenant.app.id}/streams/${stream.id}/hls`, {});
        return r.status === 409 ? undefined : r;
      },
      20_000,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const playlistUrl = started.body.playlistUrl;
    const listed = await waitFor(
      'a playlist with two segments',
      async () => {
        const response = await fetch(playlistUrl);
        const names = response.status === 200 ? segments(await response.text()) : [];
        return names.length >= 2 ? names : undefined;
      },
      120_000,
    );
    const segment = await fetch(new URL(listed[1]!, playlistUrl));
    expect(segment.status).toBe(200);
    const file = join(tmpdir(), `acceptance-${started.body.id}-${listed[1]!}`);
    writeFileSync(file, Buffer.from(await segment.arrayBuffer()));
    const media = await probe(file);
    expect(media.streams).toEqual(['audio', 'video']);
    expect(media.durationS).toBeGreaterThan(0.5);
    await decodes(file);

    expect((await tenant.client.delete(`/v1/apps/${tenant.app.id}/streams/${stream.id}/hls`)).status).toBe(200);
  });

  it("a ws-mjpeg camera's frames come back to a viewer with a camera token", async () => {
    const jpegs = await generateJpegs(4);
    const created = await tenant.client.post<CreatedCamera>(`/v1/apps/${tenant.app.id}/cameras`, { name: 'front door' });
    expect(created.status).toBe(201);
    const camera = created.body;
    const token = (await tenant.client.post<CameraToken>(`/v1/apps/${tenant.app.id}/cameras/${camera.id}/tokens`, { ttlS: 600 })).body;
    expect((await fetch(token.frameUrl)).status).toBe(401);

    const cam = await TestCamera.connect(`${camera.ingestUrl}?key=${encodeURIComponent(camera.key)}`);
    try {
      await cam.sendAt(jpegs, 4);
      const still = await waitFor(
        'the last frame sent to come back',
        async () => {
          const r = await fetch(`${token.frameUrl}?token=${encodeURIComponent(token.token)}`);
          const body = Buffer.from(await r.arrayBuffer());
          return r.status === 200 && body.equals(jpegs[3]!) ? r : undefined;
        },
        15_000,
      );
      expect(still.headers.get('content-type')).toBe('image/jpeg');
    } finally {
      cam.close();
    }
  });
});
