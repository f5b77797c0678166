import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { IngressClient, IngressInput, RoomServiceClient, TrackType } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busyHost, type BusyHost } from './busy-host.js';
import { ingressPorts, pushRtmp, startIngress, stopPush } from './ingress.js';
import { startLivekit } from './livekit.js';
import { waitFor } from './ports.js';
import { startRedis } from './redis.js';
import { startStack, type TestStack } from './stack.js';
import { mediaNodeIp } from './tools.js';

describe('LiveKit ingress in the test stack', () => {
  let stack: TestStack;
  let ffmpeg: ChildProcess | undefined;
  let busy: BusyHost | undefined;

  beforeAll(async () => {
    stack = await startStack({ ingress: true });
  });

  afterAll(async () => {
    await busy?.stop();
    await stopPush(ffmpeg);
    await stack?.stop();
  });

  it('puts an RTMP push from ffmpeg into the room as one publisher with video and audio, even on a host that measures busy', async () => {
    const { url, apiKey, apiSecret } = stack.livekit;
    const ingresses = new IngressClient(url, apiKey, apiSecret);
    const rooms = new RoomServiceClient(url, apiKey, apiSecret);
    const room = `ingress-smoke-${process.pid}`;
    // The server creates no room on join (room.auto_create: false, as installed): create it first.
    await rooms.createRoom({ name: room });
    const created = await ingresses.createIngress(IngressInput.RTMP_INPUT, {
      name: 'smoke',
      roomName: room,
      participantIdentity: 'rtmp-camera',
      participantName: 'RTMP camera',
    });
    expect(created.url).toBe(`rtmp://${stack.livekit.nodeIp}:${new URL(created.url).port}/x`);
    expect(created.streamKey).not.toBe('');

    // Ingress measures the whole host's CPU (as when the agent runs it natively); the session must be
    // taken even with no idle CPU left, since Tally's admission already decided it fits.
    busy = await busyHost();
    ffmpeg = pushRtmp(`${created.url}/${created.streamKey}`);

    const publisher = await waitFor(
      'the ingress participant’s video and audio tracks',
      async () => {
        const participants = await rooms.listParticipants(room).catch(() => []);
        const p = participants.find((x) => x.identity === 'rtmp-camera');
        const types = new Set(p?.tracks.map((t) => t.type));
        return p && types.has(TrackType.VIDEO) && types.has(TrackType.AUDIO) ? { participants, p } : undefined;
      },
      90_000,
    );
    expect(await busy.idleShare()).toBeLessThan(0.05);
    await busy.stop();
    expect(publisher.participants).toHaveLength(1);
    expect(publisher.p.tracks.find((t) => t.type === TrackType.VIDEO)?.width).toBeGreaterThan(0);
    expect(readFileSync(stack.ingress?.logFile ?? '', 'utf8')).not.toContain('server capacity exceeded');

    await stopPush(ffmpeg);
    await ingresses.deleteIngress(created.ingressId);
    expect(await ingresses.listIngress({ roomName: room })).toHaveLength(0);
  }, 120_000);
});

describe(startIngress.name, () => {
  it('brings ingress back when it exits on its own', async () => {
    const redis = await startRedis();
    const ports = await ingressPorts();
    const livekit = await startLivekit({ redisUrl: redis.url, nodeIp: mediaNodeIp(), ingress: ports });
    const sut = await startIngress({ livekit, redisUrl: redis.url, ports });
    try {
      const before = sut.process.pid;

      // SIGTERM straight to the service (not through stop()): with no session it exits by itself.
      sut.process.kill('SIGTERM');

      await waitFor(
        'ingress to be restarted',
        () => Promise.resolve(sut.restarts() === 1 && sut.process.pid !== before ? true : undefined),
        15_000,
      );
      await sut.ready();
      expect((await fetch(sut.healthUrl)).status).toBe(200);
    } finally {
      await sut.stop();
      await livekit.stop();
      await redis.stop();
    }
  });
});
