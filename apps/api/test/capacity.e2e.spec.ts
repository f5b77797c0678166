import type { AppUsageView, CapacityCheckResult, CapacityView, LimitRefusal, NodeList, StreamView } from '@tally/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

describe('capacity-aware admission', () => {
  let sut: ApiHarness;

  beforeAll(async () => {
    sut = await startApiHarness();
  });
  afterAll(async () => {
    await sut?.stop();
  });

  it('lists the agent-measured node with its budget and what admitted work reserves on it', async () => {
    const { app, client } = await createTenant(sut.admin, 'node watcher');
    await createStream(client, app.id);

    const nodes = await sut.admin.get<NodeList>('/v1/nodes');

    expect(nodes.status).toBe(200);
    const node = nodes.body.items.find((n) => n.nodeId === sut.stack.nodeId)!;
    expect(node).toMatchObject({ status: 'active', role: 'origin', budget: { cpuMillicores: 8000, ramMb: 8192, nicMbps: 1000 } });
    expect(node.reserved.ramMb).toBeGreaterThan(0);
    expect((await client.get('/v1/nodes')).status).toBe(403);
  });

  it('reports pool headroom per resource and how many more of each kind fit', async () => {
    const before = (await sut.admin.get<CapacityView>('/v1/capacity')).body;
    const { app, client } = await createTenant(sut.admin, 'headroom');
    await createStream(client, app.id);

    const after = (await sut.admin.get<CapacityView>('/v1/capacity')).body;

    expect(after.total.allocatable.ramMb).toBeGreaterThan(6000);
    expect(after.total.baseLoad.ramMb + after.total.allocatable.ramMb).toBe(8192);
    expect(after.total.free.ramMb).toBeLessThan(before.total.free.ramMb);
    expect(after.total.fits['egress.room_composite']).toBeGreaterThanOrEqual(4);
    expect(after.total.fits['egress.room_composite']).toBeLessThanOrEqual(5);
    expect(after.total.fits['stream']).toBe(before.total.fits['stream']! - 1);
  });

  it('answers the what-if without reserving, naming the app quota or the node resource', async () => {
    const { app, client } = await createTenant(sut.admin, 'planner');
    const check = (kind: string, count: number) => client.post<CapacityCheckResult>(`/v1/apps/${app.id}/capacity/check`, { kind, count });

    // Which node would take it is not an app key's business.
    expect((await check('egress.track_composite', 1)).body).toEqual({ admitted: true });
    expect((await check('egress.room_composite', 3)).body).toMatchObject({
      admitted: false,
      code: 'quota_exceeded',
      resource: 'app.room_composites',
    });

    await sut.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxRoomComposites: 50, maxRecordings: 50 } });
    const chrome = (await check('egress.room_composite', 6)).body;
    expect(chrome).toMatchObject({
      admitted: false,
      code: 'capacity_exhausted',
      resource: 'node.ram',
      requested: expect.any(Number) as number,
    });
    expect(chrome).not.toHaveProperty('nodeId');
    expect((await check('nonsense', 1)).status).toBe(400);
    const usage = (await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body;
    expect(usage.items.find((i) => i.quota === 'maxRecordings')).toEqual({ quota: 'maxRecordings', used: 0, limit: 50, guarantee: 0 });
  });

  it('takes no new streams on a draining node and says so, then takes them again', async () => {
    const { app, client } = await createTenant(sut.admin, 'drained');
    const drain = await sut.admin.patch<{ status: string }>(`/v1/nodes/${sut.stack.nodeId}`, { status: 'draining' });
    expect(drain.body.status).toBe('draining');

    const refused = await client.post<LimitRefusal>(`/v1/apps/${app.id}/streams`, { name: 'nowhere' });

    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'capacity_exhausted', resource: 'node.unavailable' });
    expect(refused.headers.get('retry-after')).not.toBeNull();
    await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'active' });
    expect((await client.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'somewhere' })).status).toBe(201);
    expect((await sut.admin.patch('/v1/nodes/no-such-node', { status: 'active' })).status).toBe(404);
    expect((await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'asleep' })).status).toBe(400);
  });

  it('counts a stream in the app usage until it ends', async () => {
    const { app, client } = await createTenant(sut.admin, 'usage');
    const stream = await createStream(client, app.id);
    const used = async () =>
      (await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body.items.find((i) => i.quota === 'maxStreams')!.used;
    expect(await used()).toBe(1);

    await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`);

    expect(await used()).toBe(0);
  });
});
