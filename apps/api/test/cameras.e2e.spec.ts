import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  AppUsageView,
  AppView,
  CameraList,
  CameraToken,
  CameraView,
  CapacityView,
  CreatedCamera,
  LimitRefusal,
} from '@tally/contracts';
import { CAMERA_CLOSE_CODES } from '@tally/contracts';
import { freePort, startAppProcess, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createTenant, startApiHarness } from './api-harness.js';
import { generateJpegs, RefusedUpgrade, TestCamera, TestMjpegViewer, TestSocketViewer } from '@tally/testing/camera';

/** Viewer leases short enough that a dead API process's viewers are seen to lapse within the test. */
const LEASE_S = 3;

describe('ws-mjpeg cameras', () => {
  let harness: ApiHarness;
  let jpegs: Buffer[];

  beforeAll(async () => {
    harness = await startApiHarness({ TALLY_CAMERA_IDLE_TIMEOUT_S: '2', TALLY_CAMERA_VIEWER_LEASE_S: String(LEASE_S) });
    jpegs = await generateJpegs(24);
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
  });

  const base = () => harness.anonymous.baseUrl;

  it('takes JPEGs from a camera and shows them to MJPEG, WebSocket and still viewers who present a token or key', async () => {
    const { app, client, key } = await createTenant(harness.admin, 'shop');
    const created = await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'front door', maxFps: 8, maxFrameKb: 64 });
    expect(created.status).toBe(201);
    const camera = created.body;
    expect(camera.id).toMatch(/^cam_[a-z0-9]{16}$/);
    expect(camera.key).toMatch(/^ck_/);
    expect(camera.ingestUrl).toBe(`${base().replace('http', 'ws')}/v1/apps/${app.id}/cameras/${camera.id}/ingest`);
    expect(camera.bitrateKbps).toBe(4195);
    const listed = await client.get<CameraList>(`/v1/apps/${app.id}/cameras`);
    expect(listed.body.items.map((c) => c.id)).toEqual([camera.id]);
    expect(JSON.stringify(listed.body)).not.toContain(camera.key);

    const token = (await client.post<CameraToken>(`/v1/apps/${app.id}/cameras/${camera.id}/tokens`, { ttlS: 600 })).body;
    expect((await fetch(`${base()}/v1/apps/${app.id}/cameras/${camera.id}/frame.jpg`)).status).toBe(401);
    // An unknown camera is a 404 whatever the credential; a malformed id a 400 naming the field.
    const viewerToken = `?token=${encodeURIComponent(token.token)}`;
    expect((await fetch(`${base()}/v1/apps/${app.id}/cameras/cam_0000000000000000/frame.jpg${viewerToken}`)).status).toBe(404);
    const malformed = await fetch(`${base()}/v1/apps/${app.id}/cameras/not-a-camera/mjpeg${viewerToken}`);
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(await malformed.json())).toContain('cameraId');
    await expect(TestSocketViewer.connect(token.websocketUrl)).rejects.toMatchObject({ status: 401 });

    const mjpeg = await TestMjpegViewer.open(`${token.mjpegUrl}?token=${encodeURIComponent(token.token)}`);
    expect(mjpeg.response.status).toBe(200);
    expect(mjpeg.response.headers.get('content-type')).toMatch(/^multipart\/x-mixed-replace; boundary=/);
    const socketViewer = await TestSocketViewer.connect(token.websocketUrl, { authorization: `Bearer ${key.key}` });

    const cam = await TestCamera.connect(`${camera.ingestUrl}?key=${encodeURIComponent(camera.key)}`);
    await cam.sendAt(jpegs.slice(0, 12), 6);

    await waitFor(
      'frames at both viewers',
      () => Promise.resolve(mjpeg.frames.length >= 8 && socketViewer.frames.length >= 8 ? true : undefined),
      15_000,
    );
    const sent = new Set(jpegs.slice(0, 12).map((j) => j.toString('base64')));
    for (const frame of [...mjpeg.frames, ...socketViewer.frames]) expect(sent.has(frame.toString('base64'))).toBe(true);
    expect(socketViewer.frames.at(-1)?.equals(jpegs[11]!)).toBe(true);

    const still = await fetch(`${token.frameUrl}?token=${encodeURIComponent(token.token)}`);
    expect(still.status).toBe(200);
    expect(still.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await still.arrayBuffer()).equals(jpegs[11]!)).toBe(true);

    const seen = await client.get<CameraView>(`/v1/apps/${app.id}/cameras/${camera.id}`);
    expect(seen.body.connected).toBe(true);
    expect(seen.body.lastFrameAt).not.toBeNull();

    const other = await createTenant(harness.admin, 'not the shop');
    expect((await other.client.get(`/v1/apps/${app.id}/cameras/${camera.id}`)).status).toBe(404);
    const foreign = await fetch(`${base()}/v1/apps/${app.id}/cameras/${camera.id}/frame.jpg`, {
      headers: { authorization: `Bearer ${other.key.key}` },
    });
    expect(foreign.status).toBe(401);

    expect((await client.delete(`/v1/apps/${app.id}/cameras/${camera.id}`)).status).toBe(204);
    expect(await cam.closed).toMatchObject({ code: CAMERA_CLOSE_CODES.deleted });
    expect(await socketViewer.closed).toMatchObject({ code: CAMERA_CLOSE_CODES.deleted });
    await mjpeg.done;
    mjpeg.stop();
    expect((await client.get(`/v1/apps/${app.id}/cameras/${camera.id}`)).status).toBe(404);
  });

  it('lets anyone watch once the app makes its cameras public', async () => {
    const { app, client } = await createTenant(harness.admin, 'public');
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'beach', maxFrameKb: 64 })).body;
    const cam = await TestCamera.connect(camera.ingestUrl, { authorization: `Bearer ${camera.key}` });
    await cam.send(jpegs[0]!);
    const frameUrl = `${base()}/v1/apps/${app.id}/cameras/${camera.id}/frame.jpg`;
    await waitFor('the first frame', async () =>
      (await client.get<CameraView>(`/v1/apps/${app.id}/cameras/${camera.id}`)).body.connected ? true : undefined,
    );
    expect((await fetch(frameUrl)).status).toBe(401);
    expect((await fetch(frameUrl, { headers: { authorization: `Bearer ${camera.key}` } })).status).toBe(401);

    const patched = await client.patch<AppView>(`/v1/apps/${app.id}`, { publicCameras: true });
    expect(patched.body.publicCameras).toBe(true);
    const still = await fetch(frameUrl);
    expect(still.status).toBe(200);
    expect(Buffer.from(await still.arrayBuffer()).equals(jpegs[0]!)).toBe(true);
    cam.close();
  });

  it('closes a camera with a distinct code for a bad frame, an oversize frame, a takeover and silence', async () => {
    const { app, client } = await createTenant(harness.admin, 'strict');
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'gate', maxFrameKb: 4 })).body;
    const auth = { authorization: `Bearer ${camera.key}` };
    const small = (await generateJpegs(1, '64x48'))[0]!;
    expect(small.length).toBeLessThan(4 * 1024);

    await expect(TestCamera.connect(camera.ingestUrl, { authorization: 'Bearer ck_wrong' })).rejects.toThrow(/401/);

    const bad = await TestCamera.connect(camera.ingestUrl, auth);
    await bad.send(Buffer.from('definitely not a jpeg'));
    const badClose = await bad.closed;
    expect(badClose.code).toBe(CAMERA_CLOSE_CODES.badFrame);
    expect(badClose.reason).toMatch(/JPEG/);

    const big = await TestCamera.connect(camera.ingestUrl, auth);
    const oversize = jpegs[0]!;
    expect(oversize.length).toBeGreaterThan(4 * 1024);
    await big.send(oversize);
    expect(await big.closed).toMatchObject({ code: CAMERA_CLOSE_CODES.frameTooLarge });

    const first = await TestCamera.connect(camera.ingestUrl, auth);
    await first.send(small);
    const second = await TestCamera.connect(camera.ingestUrl, auth);
    expect(await first.closed).toMatchObject({ code: CAMERA_CLOSE_CODES.replaced });
    await second.send(small);
    const startedIdle = Date.now();
    expect(await second.closed).toMatchObject({ code: CAMERA_CLOSE_CODES.idle });
    expect(Date.now() - startedIdle).toBeGreaterThanOrEqual(1_500);
  });

  it('closes a camera that sends far above its maxFps, and a viewer that sends more than a small message', async () => {
    const { app, client, key } = await createTenant(harness.admin, 'abusers');
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'flood', maxFps: 2, maxFrameKb: 4 })).body;
    const small = (await generateJpegs(1, '64x48'))[0]!;
    const flood = await TestCamera.connect(camera.ingestUrl, { authorization: `Bearer ${camera.key}` });
    // 2 fps allowed: 50 frames at once is 25 × the cap, far past the 2 × at which a camera is closed.
    for (let i = 0; i < 50; i += 1) await flood.send(small).catch(() => undefined);
    const closed = await flood.closed;
    expect(closed.code).toBe(CAMERA_CLOSE_CODES.tooFast);
    expect(closed.reason).toMatch(/maxFps/);

    const wsUrl = camera.ingestUrl.replace(/\/ingest$/, '/ws');
    const viewer = await TestSocketViewer.connect(wsUrl, { authorization: `Bearer ${key.key}` });
    viewer.send(Buffer.alloc(64 * 1024));
    expect((await viewer.closed).code).toBe(1009);
  });

  it('refuses cameras over maxCameras and viewers over maxCameraViewers, naming the quota', async () => {
    const { app, client, key } = await createTenant(harness.admin, 'small');
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxCameras: 1, maxCameraViewers: 1 } });
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'one' })).body;

    const refused = await client.post<LimitRefusal>(`/v1/apps/${app.id}/cameras`, { name: 'two' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.cameras', limit: 1, used: 1, requested: 1 });

    const wsUrl = camera.ingestUrl.replace(/\/ingest$/, '/ws');
    const viewer = await TestSocketViewer.connect(wsUrl, { authorization: `Bearer ${key.key}` });
    const second = await TestSocketViewer.connect(wsUrl, { authorization: `Bearer ${key.key}` }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(RefusedUpgrade);
    expect((second as RefusedUpgrade).status).toBe(429);
    expect(JSON.parse((second as RefusedUpgrade).body)).toMatchObject({
      error: { code: 'quota_exceeded', resource: 'app.camera_viewers' },
    });
    const mjpeg = await fetch(`${base()}/v1/apps/${app.id}/cameras/${camera.id}/mjpeg`, {
      headers: { authorization: `Bearer ${key.key}` },
    });
    expect(mjpeg.status).toBe(429);
    expect(((await mjpeg.json()) as LimitRefusal).error).toMatchObject({ resource: 'app.camera_viewers' });

    viewer.close();
    await viewer.closed;
    await waitFor('the viewer’s place back', async () => {
      const usage = (await client.get<{ items: { quota: string; used: number }[] }>(`/v1/apps/${app.id}/usage`)).body;
      return usage.items.find((i) => i.quota === 'maxCameraViewers')?.used === 0 ? true : undefined;
    });
    const again = await TestSocketViewer.connect(wsUrl, { authorization: `Bearer ${key.key}` });
    again.close();

    expect((await client.delete(`/v1/apps/${app.id}/cameras/${camera.id}`)).status).toBe(204);
    expect((await client.post(`/v1/apps/${app.id}/cameras`, { name: 'two' })).status).toBe(201);
  });

  it('frees the places of viewers served by an API process that was killed, and keeps those of a live one', async () => {
    const { app, client, key } = await createTenant(harness.admin, 'two replicas');
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxCameraViewers: 2 } });
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'yard', maxFrameKb: 64 })).body;
    const auth = { authorization: `Bearer ${key.key}` };
    const viewersUsed = async () =>
      (await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body.items.find((i) => i.quota === 'maxCameraViewers')?.used;
    const nodeNic = async () =>
      (await harness.admin.get<CapacityView>('/v1/capacity')).body.nodes.find((n) => n.nodeId === harness.stack.nodeId)!.reserved.nicKbps;
    const otherPort = await freePort();
    const other = await startAppProcess(
      'api',
      { ...harness.stack.env, TALLY_PORT: String(otherPort) },
      join(tmpdir(), `tally-api-cameras-${process.pid}.log`),
    );

    const wsPath = new URL(camera.ingestUrl).pathname.replace(/\/ingest$/, '/ws');
    const stays = await TestSocketViewer.connect(`${base().replace('http', 'ws')}${wsPath}`, auth);
    const orphaned = await TestSocketViewer.connect(`ws://127.0.0.1:${otherPort}${wsPath}`, auth);
    expect(await viewersUsed()).toBe(2);
    const withBoth = await nodeNic();
    const exited = new Promise((resolve) => other.process.once('exit', resolve));
    other.process.kill('SIGKILL');
    await exited;
    await other.stop();
    await orphaned.closed;

    await waitFor('the killed process’s viewer to stop counting', async () => ((await viewersUsed()) === 1 ? true : undefined), 60_000);
    expect(await nodeNic()).toBe(withBoth - camera.bitrateKbps);

    await sleep(LEASE_S * 2 * 1000);
    expect(await viewersUsed()).toBe(1);
    expect(await nodeNic()).toBe(withBoth - camera.bitrateKbps);
    const stillOpen = await Promise.race([stays.closed.then(() => false), sleep(100).then(() => true)]);
    expect(stillOpen).toBe(true);
    const second = await TestSocketViewer.connect(`${base().replace('http', 'ws')}${wsPath}`, auth);
    const third = await TestSocketViewer.connect(`${base().replace('http', 'ws')}${wsPath}`, auth).catch((e: unknown) => e);
    expect(third).toMatchObject({ status: 429 });
    const cam = await TestCamera.connect(camera.ingestUrl, { authorization: `Bearer ${camera.key}` });
    await cam.send(jpegs[0]!);
    await waitFor('a frame at the viewer that stayed', () => Promise.resolve(stays.frames.length > 0 ? true : undefined), 15_000);

    for (const v of [stays, second]) v.close();
    await Promise.all([stays.closed, second.closed]);
    await waitFor('every place back', async () => ((await viewersUsed()) === 0 ? true : undefined));
    cam.close();
  });
});
