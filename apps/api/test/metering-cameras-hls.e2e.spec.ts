import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppMeteringView, CameraToken, CreatedCamera } from '@tally/contracts';
import { newId } from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { CONNECTION_SEEN_MS } from '@tally/metering';
import { type ApiClient, type Child, freePort, startAppProcess, TestRows, waitFor } from '@tally/testing';
import { generateJpegs, TestCamera, TestMjpegViewer, TestSocketViewer } from '@tally/testing/camera';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

const HOUR_MS = 3_600_000;
const minutes = (ms: number): number => ms / 60_000;

/** Within 2 % of what the test's own clock measured. */
function expectNear(actual: number, expected: number, what: string): void {
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected} minutes`).toBeLessThanOrEqual(expected * 0.02);
}

/** When something happened by the test's clock: halfway through the call that made it happen. */
async function timed(action: () => Promise<unknown>): Promise<number> {
  const before = Date.now();
  await action();
  return (before + Date.now()) / 2;
}

describe('metering of cameras, camera viewers and HLS bytes served', () => {
  let sut: ApiHarness;
  let prisma: ReturnType<typeof createPrismaClient>;
  let jpegs: Buffer[];
  let worker: Child | undefined;
  const hlsDir = mkdtempSync(join(tmpdir(), 'tally-hls-metering-'));

  beforeAll(async () => {
    sut = await startApiHarness({ TALLY_HLS_DIR: hlsDir, TALLY_METERING_SYNC_INTERVAL_S: '1', TALLY_CAMERA_IDLE_TIMEOUT_S: '10' });
    prisma = createPrismaClient(sut.stack.config.databaseUrl);
    jpegs = await generateJpegs(8);
    // The worker's sweep rolls usage up (what the tally_usage_* counters read) and ends orphaned connections.
    worker = await startAppProcess('worker', sut.stack.env, join(tmpdir(), `tally-worker-metering-cams-${process.pid}.log`));
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await prisma?.$disconnect();
    await sut?.stop();
    rmSync(hlsDir, { recursive: true, force: true });
  });

  /** The app's usage from the last hour to the next, by hour. */
  async function usageOf(client: ApiClient, appId: string): Promise<AppMeteringView> {
    const from = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS).toISOString();
    const to = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 2 * HOUR_MS).toISOString();
    return (await client.get<AppMeteringView>(`/v1/apps/${appId}/metering?from=${from}&to=${to}&granularity=hour`)).body;
  }

  /** The app's usage once two reads a second apart agree on `pick` (the end writes have landed). */
  async function settledUsage(client: ApiClient, appId: string, pick: (u: AppMeteringView) => number): Promise<AppMeteringView> {
    let previous = -1;
    return waitFor(
      'the usage to settle',
      async () => {
        const usage = await usageOf(client, appId);
        const settled = pick(usage) > 0 && pick(usage) === previous;
        previous = pick(usage);
        if (!settled) await sleep(1_000);
        return settled ? usage : undefined;
      },
      30_000,
    );
  }

  /** Keeps a camera sending at 4 fps until `stop` resolves or its connection is gone. */
  async function keepSending(cam: TestCamera, stop: Promise<unknown>): Promise<void> {
    let stopped = false;
    void stop.then(() => (stopped = true));
    void cam.closed.then(() => (stopped = true));
    while (!stopped) {
      await cam.sendAt(jpegs, 4).catch(() => undefined);
      await sleep(250);
    }
  }

  it('bills a ws-mjpeg camera and its WebSocket and MJPEG viewers within 2 % of the test clock', async () => {
    const { app, client, key } = await createTenant(sut.admin, 'metered-cams');
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'porch', maxFps: 8, maxFrameKb: 64 })).body;
    const token = (await client.post<CameraToken>(`/v1/apps/${app.id}/cameras/${camera.id}/tokens`, { ttlS: 600 })).body;

    let cam: TestCamera | undefined;
    const cameraConnected = await timed(async () => {
      cam = await TestCamera.connect(camera.ingestUrl, { authorization: `Bearer ${camera.key}` });
    });
    let done!: () => void;
    const sending = keepSending(cam!, new Promise<void>((resolve) => (done = resolve)));
    await sleep(5_000);

    let socketViewer: TestSocketViewer | undefined;
    const socketOpened = await timed(async () => {
      socketViewer = await TestSocketViewer.connect(token.websocketUrl, { authorization: `Bearer ${key.key}` });
    });
    let mjpeg: TestMjpegViewer | undefined;
    const mjpegOpened = await timed(async () => {
      mjpeg = await TestMjpegViewer.open(`${token.mjpegUrl}?token=${encodeURIComponent(token.token)}`);
    });
    expect(mjpeg!.response.status).toBe(200);
    // A still frame is one request, not a viewer minute.
    expect((await fetch(`${token.frameUrl}?token=${encodeURIComponent(token.token)}`)).status).toBe(200);
    await sleep(20_000);
    const mjpegClosed = await timed(async () => {
      mjpeg!.stop();
      await mjpeg!.done;
    });
    await sleep(10_000);
    const socketClosed = await timed(async () => {
      socketViewer!.close();
      await socketViewer!.closed;
    });
    expect(socketViewer!.frames.length).toBeGreaterThan(0);
    await sleep(5_000);
    done();
    await sending;
    const cameraClosed = await timed(async () => {
      cam!.close();
      await cam!.closed;
    });

    const billed = await settledUsage(client, app.id, (u) => u.cameraMinutes + u.cameraViewerMinutes);
    expectNear(billed.cameraMinutes, minutes(cameraClosed - cameraConnected), 'camera');
    expectNear(billed.cameraViewerMinutes, minutes(socketClosed - socketOpened + (mjpegClosed - mjpegOpened)), 'camera viewers');
    const bucketed = billed.buckets.reduce((sum, b) => sum + b.usage.cameraMinutes, 0);
    expect(bucketed).toBeCloseTo(billed.cameraMinutes, 6);
    expect(billed.participantMinutes).toBe(0);

    const csv = await client.raw(`/v1/apps/${app.id}/metering?from=${billed.from}&to=${billed.to}&granularity=hour`, {
      accept: 'text/csv',
    });
    const [header, ...rows] = (await csv.text()).trim().split('\n');
    const column = header!.split(',').indexOf('camera_viewer_minutes');
    expect(column).toBeGreaterThan(2);
    const csvViewerMinutes = rows.map((r) => Number(r.split(',')[column])).reduce((a, b) => a + b, 0);
    expect(csvViewerMinutes).toBeCloseTo(billed.cameraViewerMinutes, 4);

    const metrics = await (await sut.anonymous.raw('/metrics')).text();
    const counter = (name: string): number =>
      Number(new RegExp(`^${name}\\{app="${app.id}"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? Number.NaN);
    expectNear(counter('tally_usage_camera_minutes_total'), billed.cameraMinutes, 'camera counter');
    expectNear(counter('tally_usage_camera_viewer_minutes_total'), billed.cameraViewerMinutes, 'viewer counter');
  }, 180_000);

  it('bills the HLS bytes a player downloaded from the public route, and nothing for HEAD, 304 or 404', async () => {
    const { app, client } = await createTenant(sut.admin, 'metered-hls');
    const stream = await createStream(client, app.id);
    const id = newId('hls');
    const dir = join(hlsDir, app.id, stream.id, id);
    mkdirSync(dir, { recursive: true });
    const segments = [randomBytes(180_000), randomBytes(240_001)];
    segments.forEach((s, i) => writeFileSync(join(dir, `seg_0000${i + 1}.ts`), s));
    writeFileSync(join(dir, 'index.m3u8'), '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg_00001.ts\n#EXTINF:2.0,\nseg_00002.ts\n');
    const session = await new TestRows(prisma).newHlsSession({
      id,
      appId: app.id,
      streamId: stream.id,
      nodeId: sut.stack.nodeId,
      dir,
      status: 'stopped',
      stoppedAt: new Date(),
      purgeAt: new Date(Date.now() + 86_400_000),
    });
    const url = (file: string): string => `${sut.anonymous.baseUrl}/hls/${session.publicId}/${file}`;

    let downloaded = 0;
    const get = async (file: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> => {
      const response = await fetch(url(file), { headers, method });
      const body = (await response.arrayBuffer()).byteLength;
      // Playlists and segments, whole or a range; a 404's error body is not HLS served.
      if (response.status === 200 || response.status === 206) downloaded += body;
      return response;
    };
    expect((await get('index.m3u8')).status).toBe(200);
    const first = await get('seg_00001.ts');
    expect(first.status).toBe(200);
    expect((await get('seg_00002.ts', { range: 'bytes=1000-50999' })).status).toBe(206);
    expect((await get('seg_00002.ts')).status).toBe(200);
    expect((await get('seg_00002.ts', {}, 'HEAD')).status).toBe(200);
    // A revalidation (fetch adds `cache-control: no-cache` to a conditional request unless told otherwise).
    const revalidate = { 'if-none-match': first.headers.get('etag') ?? '', 'cache-control': 'max-age=0' };
    expect((await get('seg_00001.ts', revalidate)).status).toBe(304);
    expect((await get('seg_00009.ts')).status).toBe(404);
    expect(downloaded).toBeGreaterThan(segments[0]!.length + segments[1]!.length + 50_000 - 1);

    // Bytes served to one app are not another's.
    const other = await createTenant(sut.admin, 'not-served');
    const billed = await settledUsage(client, app.id, (u) => u.hlsBytesServed);
    expect(billed.hlsBytesServed).toBe(downloaded);
    expect((await usageOf(other.client, other.app.id)).hlsBytesServed).toBe(0);
    const metrics = await (await sut.anonymous.raw('/metrics')).text();
    const counter = new RegExp(`^tally_usage_hls_bytes_served_total\\{app="${app.id}"\\} (\\S+)$`, 'm').exec(metrics);
    expect(Number(counter?.[1])).toBe(downloaded);
  }, 120_000);

  it('ends the camera connections of an API process that died when it last marked them open', async () => {
    const { app, client } = await createTenant(sut.admin, 'orphaned-cams');
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'shed', maxFps: 8, maxFrameKb: 64 })).body;
    const otherPort = await freePort();
    const other = await startAppProcess(
      'api',
      { ...sut.stack.env, TALLY_PORT: String(otherPort) },
      join(tmpdir(), `tally-api-metering-cams-${process.pid}.log`),
    );
    const ingest = `ws://127.0.0.1:${otherPort}${new URL(camera.ingestUrl).pathname}`;
    let cam: TestCamera | undefined;
    const connected = await timed(async () => {
      cam = await TestCamera.connect(ingest, { authorization: `Bearer ${camera.key}` });
    });
    const sending = keepSending(cam!, cam!.closed);
    await sleep(25_000);
    const exited = new Promise((resolve) => other.process.once('exit', resolve));
    const killed = await timed(async () => {
      other.process.kill('SIGKILL');
      await exited;
    });
    await other.stop();
    await sending;

    // Open, it counts up to each read; once the sweep has ended it (60 s unseen), it no longer grows.
    const billed = await waitFor(
      'the sweep to end the orphaned camera interval',
      async () => {
        const found = await prisma.usageInterval.findFirst({ where: { appId: app.id, meter: 'camera' } });
        return found?.endedAt ? found : undefined;
      },
      120_000,
    );
    const usage = await settledUsage(client, app.id, (u) => u.cameraMinutes);
    expect(minutes(billed.endedAt!.getTime() - billed.startedAt!.getTime())).toBeCloseTo(usage.cameraMinutes, 6);
    // Ended when last marked open: about one marking period before the kill at most (a timer may
    // fire a little late on a busy host), never after it.
    expect(usage.cameraMinutes).toBeLessThanOrEqual(minutes(killed - connected) * 1.02);
    expect(usage.cameraMinutes).toBeGreaterThanOrEqual(minutes(killed - connected - CONNECTION_SEEN_MS - 5_000));
  }, 240_000);
});
