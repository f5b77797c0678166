import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { CreatedIngress, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import {
  type Child,
  type ClientNamespace,
  issueTestCertificate,
  mediaNodeIp,
  startAppProcess,
  startClientNamespace,
  waitFor,
} from '@tally/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import {
  type FirewalledBrowser,
  joinFromPage,
  launchFirewalledChromium,
  leave,
  publishWhipFromPage,
  selectedPaths,
  stopWhipFromPage,
  subscribedKinds,
  whipConnectionState,
} from '@tally/testing/browser';
import { recordingIn } from './recording-client.js';

const TURN_DOMAIN = 'turn.tally.test';
/** coturn's port with `install.sh --domain` (docs/adr/0042-turn-tls-beside-caddy.md). */
const TURN_TLS_PORT = 5349;
const TURN_URL = `turns:${TURN_DOMAIN}:${TURN_TLS_PORT}?transport=tcp`;

describe('a client behind a firewall that drops UDP', () => {
  let harness: ApiHarness;
  let worker: Child;
  let ns: ClientNamespace;
  let chromium: FirewalledBrowser;
  let nodeIp: string;
  const pages: Page[] = [];

  beforeAll(async () => {
    nodeIp = mediaNodeIp();
    const certificate = await issueTestCertificate(TURN_DOMAIN);
    harness = await startApiHarness(
      {},
      {
        egress: true,
        ingress: true,
        turn: { domain: TURN_DOMAIN, certFile: certificate.certFile, keyFile: certificate.keyFile, tlsPort: TURN_TLS_PORT },
      },
    );
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-turn-${Date.now()}.log`));
    // UDP dropped both ways; TCP only to TURN/TLS, to signalling (behind Caddy on 443 when installed) and to WHIP.
    const whipPort = harness.stack.ingress?.config.whip_port ?? 0;
    ns = await startClientNamespace({ tcpPorts: [TURN_TLS_PORT, harness.stack.livekit.port, whipPort] });
    chromium = await launchFirewalledChromium(ns, certificate.caFile, { [TURN_DOMAIN]: nodeIp });
  }, 180_000);

  afterAll(async () => {
    for (const page of pages)
      await page
        .context()
        .close()
        .catch(() => undefined);
    await chromium?.stop();
    await ns?.stop();
    await worker?.stop();
    await harness?.stop();
  });

  it('publishes and subscribes with Tally tokens through TURN over TLS, and its recording completes', async () => {
    const { app, client } = await createTenant(harness.admin, 'behind-a-firewall');
    const stream = await createStream(client, app.id, 'hotel wifi');
    const base = `/v1/apps/${app.id}/streams/${stream.id}`;
    const host = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'host', role: 'publisher' })).body;
    const fan = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'fan', role: 'viewer' })).body;

    const publisher = await joinFromPage(chromium.browser, host.url, host.token, true);
    pages.push(publisher);
    await waitFor(
      'the stream to be live with its publisher',
      async () => {
        const s = (await client.get<StreamView>(base)).body;
        return s.status === 'live' && s.publishers === 1 ? s : undefined;
      },
      60_000,
    );
    const viewer = await joinFromPage(chromium.browser, fan.url, fan.token, false);
    pages.push(viewer);
    expect(
      await waitFor(
        'the viewer to receive audio and video',
        async () => {
          const kinds = await subscribedKinds(viewer);
          return kinds.length === 2 ? kinds : undefined;
        },
        60_000,
      ),
    ).toEqual(['audio', 'video']);
    const size = await viewer.waitForFunction(
      () => {
        const video = (
          globalThis as unknown as {
            document: { querySelector(s: string): { readyState: number; videoWidth: number; videoHeight: number } | null };
          }
        ).document.querySelector('#remote-video');
        return video && video.readyState >= 2 && video.videoWidth > 0 ? { width: video.videoWidth, height: video.videoHeight } : false;
      },
      undefined,
      { timeout: 60_000 },
    );
    expect(await size.jsonValue()).toMatchObject({ width: expect.any(Number) as number });

    for (const [who, page] of [
      ['publisher', publisher],
      ['viewer', viewer],
    ] as const) {
      const paths = await waitFor(
        `the ${who}'s media path`,
        async () => {
          const found = await selectedPaths(page);
          return found.some((p) => p.bytesReceived > 0 && p.bytesSent > 0) ? found : undefined;
        },
        30_000,
      );
      for (const path of paths)
        console.log(
          `[turn-tls] ${who}: candidate ${path.candidateType}, relay protocol ${path.relayProtocol}, via ${path.url} to ${path.remote}`,
        );
      expect(paths[0]?.iceServers).toContain(TURN_URL);
      expect(paths.map((p) => [p.candidateType, p.relayProtocol, p.url])).toEqual(paths.map(() => ['relay', 'tls', TURN_URL]));
    }

    const started = await client.post<RecordingView>(`${base}/recordings`, {});
    expect(started.status).toBe(201);
    await recordingIn(client, app.id, started.body.id, ['active']);
    await new Promise((r) => setTimeout(r, 5_000));
    await leave(publisher);
    const complete = await recordingIn(client, app.id, started.body.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null });
    if (complete.codecs?.length !== 2) await logParts(harness, started.body.id);
    expect(complete.codecs?.map((c) => c.type).sort()).toEqual(['audio', 'video']);
    expect(complete.durationS).toBeGreaterThan(2);
  }, 300_000);

  it('publishes over WHIP through the TURN server named in the answer, and its recording completes', async () => {
    const { app, client } = await createTenant(harness.admin, 'whip-behind-a-firewall');
    const stream = await createStream(client, app.id, 'field reporter');
    const base = `/v1/apps/${app.id}/streams/${stream.id}`;
    const ingress = (await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'whip' })).body;

    const { page, session } = await publishWhipFromPage(chromium.browser, ingress.url, ingress.streamKey);
    pages.push(page);
    const handed = session.iceServers.find((s) => s.urls === TURN_URL);
    expect(handed).toMatchObject({ username: expect.stringMatching(/^\d+:/) as string, credential: expect.any(String) as string });
    // TURN REST credentials for this session, valid for 4 hours, as LiveKit's for participants.
    const expiresInS = Number(handed?.username?.split(':')[0]) - Date.now() / 1000;
    expect(expiresInS).toBeGreaterThan(4 * 3600 - 600);
    expect(expiresInS).toBeLessThanOrEqual(4 * 3600 + 60);

    await waitFor(
      'the WHIP publisher to connect',
      async () => ((await whipConnectionState(page)) === 'connected' ? true : undefined),
      60_000,
    );
    await waitFor(
      'the stream to be live',
      async () => ((await client.get<StreamView>(base)).body.status === 'live' ? true : undefined),
      60_000,
    );
    const paths = await waitFor(
      "the WHIP publisher's media path",
      async () => {
        const found = await selectedPaths(page);
        return found.some((p) => p.bytesReceived > 0 && p.bytesSent > 0) ? found : undefined;
      },
      30_000,
    );
    for (const path of paths)
      console.log(
        `[turn-tls] WHIP publisher: candidate ${path.candidateType}, relay protocol ${path.relayProtocol}, via ${path.url} to ${path.remote}`,
      );
    expect(paths.map((p) => [p.candidateType, p.relayProtocol, p.url])).toEqual(paths.map(() => ['relay', 'tls', TURN_URL]));
    // Ingress publishes the audio and video tracks one after the other; a recording records the
    // tracks LiveKit lists when it is asked for.
    const rooms = new LivekitRoomClient(harness.stack.config.livekit);
    await waitFor(
      'the WHIP participant to publish video and audio',
      async () => {
        const kinds = new Set((await rooms.listParticipants(stream.room)).flatMap((p) => p.tracks.map((t) => t.kind)));
        return kinds.has('video') && kinds.has('audio') ? true : undefined;
      },
      30_000,
    );

    const started = await client.post<RecordingView>(`${base}/recordings`, {});
    expect(started.status).toBe(201);
    await recordingIn(client, app.id, started.body.id, ['active']);
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await stopWhipFromPage(page, session)).toBe(200);
    const complete = await recordingIn(client, app.id, started.body.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null });
    expect(complete.codecs?.map((c) => c.type).sort()).toEqual(['audio', 'video']);
  }, 300_000);

  it('gets no media path when the client does not trust the TURN server certificate', async () => {
    const { app, client } = await createTenant(harness.admin, 'untrusting');
    const stream = await createStream(client, app.id);
    const host = (await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' }))
      .body;
    const untrusting = await launchFirewalledChromium(ns, undefined, { [TURN_DOMAIN]: nodeIp });
    try {
      await expect(joinFromPage(untrusting.browser, host.url, host.token, true)).rejects.toThrow(/could not establish pc connection/);
    } finally {
      await untrusting.stop();
    }
  }, 120_000);
});

/** What each track egress of a recording that lost a track went through, for the test's output. */
async function logParts(harness: ApiHarness, recordingId: string): Promise<void> {
  const prisma = createPrismaClient(harness.stack.config.databaseUrl);
  try {
    console.log(`[turn-tls] parts of ${recordingId}: ${JSON.stringify(await prisma.recordingEgress.findMany({ where: { recordingId } }))}`);
  } finally {
    await prisma.$disconnect();
  }
}
