import type { AppUsageView, AppView, CameraView, CapacityView, ErrorBody, LimitRefusal, StreamView } from '@tally/contracts';
import type { ApiClient } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createTenant, startApiHarness } from './api-harness.js';

/** Caps that do not shrink as apps are created, and guarantees that partition the pool (ADR 0012). */
describe('caps and guarantees', () => {
  let sut: ApiHarness;

  beforeAll(async () => {
    sut = await startApiHarness();
  });
  afterAll(async () => {
    await sut?.stop();
  });

  const usageOf = async (client: ApiClient, appId: string, quota: string) =>
    (await client.get<AppUsageView>(`/v1/apps/${appId}/usage`)).body.items.find((i) => i.quota === quota);

  it('gives the 101st app its full cap while 100 idle apps exist', async () => {
    for (let batch = 0; batch < 10; batch += 1) {
      const created = await Promise.all(
        Array.from({ length: 10 }, (_, i) => sut.admin.post<AppView>('/v1/apps', { name: `idle ${batch * 10 + i}` })),
      );
      expect(created.map((r) => r.status)).toEqual(Array(10).fill(201));
    }
    const { app, client } = await createTenant(sut.admin, 'the 101st');

    expect(app.quotas).toMatchObject({ maxStreams: 10, maxRoomComposites: 2 });
    expect(app.quotas.maxRecordings).toBeGreaterThanOrEqual(8);
    const streams: StreamView[] = [];
    for (let i = 0; i < 10; i += 1) {
      const created = await client.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: `s${i}` });
      expect(created.status).toBe(201);
      streams.push(created.body);
    }
    const refused = await client.post<LimitRefusal>(`/v1/apps/${app.id}/streams`, { name: 'one more' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams', limit: 10, used: 10 });
    expect(await usageOf(client, app.id, 'maxStreams')).toEqual({ quota: 'maxStreams', used: 10, limit: 10, guarantee: 0 });
    for (const s of streams) expect((await client.delete(`/v1/apps/${app.id}/streams/${s.id}`)).status).toBe(200);
  });

  it('refuses a guarantee the pool cannot hold beside the others with a 409 naming the quota and the room left', async () => {
    const first = await createTenant(sut.admin, 'guaranteed chrome');
    const second = await createTenant(sut.admin, 'wants more chrome');
    const fit = (await sut.admin.get<CapacityView>('/v1/capacity')).body.total.fits['egress.room_composite']!;
    expect(fit).toBeGreaterThanOrEqual(4);

    const granted = await sut.admin.patch<AppView>(`/v1/apps/${first.app.id}`, { guarantees: { maxRoomComposites: 2 } });
    expect(granted.status).toBe(200);
    expect(granted.body.guarantees.maxRoomComposites).toBe(2);

    const refused = await sut.admin.patch<ErrorBody>(`/v1/apps/${second.app.id}`, { guarantees: { maxRoomComposites: fit - 1 } });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'conflict',
      details: { field: 'guarantees.maxRoomComposites', quota: 'maxRoomComposites', requested: fit - 1, room: fit - 2 },
    });
    expect((await sut.admin.get<AppView>(`/v1/apps/${second.app.id}`)).body.guarantees.maxRoomComposites).toBe(0);

    const room = (refused.body.error.details as { room: number }).room;
    expect((await sut.admin.patch(`/v1/apps/${second.app.id}`, { guarantees: { maxRoomComposites: room } })).status).toBe(200);
    expect((await second.client.patch(`/v1/apps/${second.app.id}`, { guarantees: { maxStreams: 1 } })).status).toBe(403);
    expect((await sut.admin.patch(`/v1/apps/${second.app.id}`, { guarantees: { maxStreams: -1 } })).status).toBe(400);

    const pool = (await sut.admin.get<CapacityView>('/v1/capacity')).body.guarantees;
    expect(pool.guaranteed.maxRoomComposites).toBe(2 + room);
    expect(pool.promised.ramMb).toBeLessThanOrEqual(pool.allocatable.ramMb);
    for (const { app } of [first, second]) {
      expect((await sut.admin.patch(`/v1/apps/${app.id}`, { guarantees: { maxRoomComposites: null } })).status).toBe(200);
    }
    expect((await sut.admin.get<CapacityView>('/v1/capacity')).body.guarantees.guaranteed.maxRoomComposites).toBe(0);
  });

  it('keeps an app’s guaranteed streams free while another app saturates the node', async () => {
    const vip = await createTenant(sut.admin, 'vip');
    const busy = await createTenant(sut.admin, 'busy');
    await sut.admin.patch(`/v1/apps/${busy.app.id}`, { quotas: { maxCameras: 1_000, maxStreams: 1_000 } });
    expect((await sut.admin.patch(`/v1/apps/${vip.app.id}`, { guarantees: { maxStreams: 2 } })).status).toBe(200);
    expect(await usageOf(vip.client, vip.app.id, 'maxStreams')).toEqual({ quota: 'maxStreams', used: 0, limit: 10, guarantee: 2 });
    expect((await sut.admin.get<CapacityView>('/v1/capacity')).body.guarantees.unused.nicKbps).toBeGreaterThanOrEqual(5_000);

    // Fill the node's network with 80 Mbps cameras, then with streams, until the rest is the vip's guarantee.
    const cameras: CameraView[] = [];
    const streams: StreamView[] = [];
    let refusal: LimitRefusal['error'] | undefined;
    for (;;) {
      const r = await busy.client.post<CameraView | LimitRefusal>(`/v1/apps/${busy.app.id}/cameras`, {
        name: 'wide',
        maxFps: 10,
        maxFrameKb: 1_000,
      });
      if (r.status !== 201) {
        expect(r.status).toBe(429);
        break;
      }
      cameras.push(r.body as CameraView);
    }
    expect(cameras.length).toBeGreaterThan(3);
    for (;;) {
      const r = await busy.client.post<StreamView | LimitRefusal>(`/v1/apps/${busy.app.id}/streams`, { name: 'filler' });
      if (r.status !== 201) {
        expect(r.status).toBe(429);
        refusal = (r.body as LimitRefusal).error;
        break;
      }
      streams.push(r.body as StreamView);
    }
    expect(refusal).toMatchObject({ code: 'capacity_exhausted', resource: 'pool.guaranteed', heldResource: 'node.nic' });
    expect(JSON.stringify(refusal)).not.toContain(vip.app.id);

    const mine: StreamView[] = [];
    for (let i = 0; i < 2; i += 1) {
      const r = await vip.client.post<StreamView>(`/v1/apps/${vip.app.id}/streams`, { name: `guaranteed ${i}` });
      expect(r.status).toBe(201);
      mine.push(r.body);
    }
    const beyond = await vip.client.post<LimitRefusal>(`/v1/apps/${vip.app.id}/streams`, { name: 'beyond the guarantee' });
    expect(beyond.status).toBe(429);
    expect(beyond.body.error.code).toBe('capacity_exhausted');
    // Which node came closest is told to the operator's admin key only, never to an app key.
    expect(beyond.body.error).not.toHaveProperty('nodeId');
    const asAdmin = await sut.admin.post<LimitRefusal>(`/v1/apps/${vip.app.id}/streams`, { name: 'beyond, asked by the admin' });
    expect([asAdmin.status, asAdmin.body.error.code, typeof asAdmin.body.error.nodeId]).toEqual([429, 'capacity_exhausted', 'string']);

    // Ending one gives the unit back to the guarantee, not to the busy app.
    expect((await vip.client.delete(`/v1/apps/${vip.app.id}/streams/${mine[0]!.id}`)).status).toBe(200);
    const stillRefused = await busy.client.post<LimitRefusal>(`/v1/apps/${busy.app.id}/streams`, { name: 'taking it' });
    expect(stillRefused.status).toBe(429);
    expect(stillRefused.body.error).toMatchObject({ resource: 'pool.guaranteed' });
    expect((await vip.client.post(`/v1/apps/${vip.app.id}/streams`, { name: 'again' })).status).toBe(201);

    for (const c of cameras) await busy.client.delete(`/v1/apps/${busy.app.id}/cameras/${c.id}`);
    for (const s of streams) await busy.client.delete(`/v1/apps/${busy.app.id}/streams/${s.id}`);
  });
});
