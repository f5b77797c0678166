import { EGRESS_MODES } from '@tally/capacity';
import type { CameraView, CapacityView, CreatedCamera } from '@tally/contracts';
import { waitFor } from '@tally/testing';
import { createPrismaClient } from '@tally/db';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsController } from '../src/metrics/metrics.controller.js';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { generateJpegs, TestCamera, TestSocketViewer } from '@tally/testing/camera';

const TOKEN = 'metrics-token-for-the-e2e-test';

type Sample = Readonly<{ name: string; labels: Readonly<Record<string, string>>; value: number }>;

/** The Prometheus text format, as far as these tests read it (no escaped quotes in our labels). */
function parseExposition(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
      if (!match) throw new Error(`unparsable sample: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The sum of every sample of `name` whose labels include `labels`. */
function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((t, s) => t + s.value, 0);
}

describe(MetricsController.name, () => {
  let sut: ApiHarness;

  const scrape = async (): Promise<Sample[]> => {
    const response = await sut.anonymous.raw('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(response.status).toBe(200);
    return parseExposition(await response.text());
  };

  beforeAll(async () => {
    sut = await startApiHarness({ TALLY_METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await sut?.stop();
  });

  it('answers only with the configured bearer token, even on loopback', async () => {
    expect((await sut.anonymous.raw('/metrics')).status).toBe(401);
    expect((await sut.anonymous.raw('/metrics', { authorization: 'Bearer not-the-metrics-token' })).status).toBe(403);
    // The admin key is not the metrics token.
    expect((await sut.admin.raw('/metrics')).status).toBe(403);

    const response = await sut.anonymous.raw('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await response.text();
    expect(body).toContain('# TYPE tally_admissions_total counter');
    expect(body).toContain('tally_api_process_cpu_seconds_total');
  });

  it("exports an app's held streams against its quota once a stream is created", async () => {
    const { app, client } = await createTenant(sut.admin, 'metrics-usage');
    expect(total(await scrape(), 'tally_app_quota_used', { app: app.id, quota: 'streams' })).toBe(0);

    await createStream(client, app.id);

    const samples = await scrape();
    expect(total(samples, 'tally_app_quota_used', { app: app.id, quota: 'streams' })).toBe(1);
    expect(total(samples, 'tally_app_quota_limit', { app: app.id, quota: 'streams' })).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'tally_app_streams', { app: app.id, status: 'created' })).toBe(1);
    expect(total(samples, 'tally_admissions_total', { kind: 'stream', outcome: 'admitted' })).toBeGreaterThanOrEqual(1);
    expect(
      total(samples, 'tally_http_request_duration_seconds_count', { method: 'POST', route: '/v1/apps/:appId/streams', status: '201' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts a refused stream under the resource that refused it', async () => {
    const { app, client } = await createTenant(sut.admin, 'metrics-refused', { maxStreams: 0 });
    const before = total(await scrape(), 'tally_admissions_total', { outcome: 'refused', resource: 'app.streams' });

    expect((await client.post(`/v1/apps/${app.id}/streams`, { name: 'refused' })).status).toBe(429);

    const after = await scrape();
    expect(total(after, 'tally_admissions_total', { kind: 'stream', outcome: 'refused', resource: 'app.streams' })).toBe(before + 1);
    expect(total(after, 'tally_app_quota_limit', { app: app.id, quota: 'streams' })).toBe(0);
  });

  it('exports the same pool headroom as GET /v1/capacity, and the node behind it', async () => {
    const samples = await scrape();
    const capacity = (await sut.admin.get<CapacityView>('/v1/capacity')).body;

    const resources = { ram_mb: 'ramMb', cpu_millicores: 'cpuMillicores', nic_kbps: 'nicKbps' } as const;
    for (const [resource, key] of Object.entries(resources)) {
      expect(total(samples, 'tally_pool_budget', { resource })).toBe(capacity.total.allocatable[key]);
      expect(total(samples, 'tally_pool_reserved', { resource })).toBe(capacity.total.reserved[key]);
      expect(total(samples, 'tally_pool_free', { resource })).toBe(capacity.total.free[key]);
    }
    const nodeId = capacity.nodes[0]!.nodeId;
    expect(total(samples, 'tally_nodes', { status: 'active' })).toBe(capacity.nodes.length);
    expect(total(samples, 'tally_node_heartbeat_age_seconds', { node: nodeId })).toBeLessThan(10);
    expect(total(samples, 'tally_node_used_ram_mb', { node: nodeId })).toBeGreaterThan(0);
  });

  it('reports queue depths, finished recordings and the reconciliation repairs the worker recorded', async () => {
    const redis = new Redis(sut.stack.config.redisUrl);
    await redis.hincrby('tally:metrics:repairs', 'streams.endedRoomGone', 2);
    await redis.quit();

    const samples = await scrape();
    expect(total(samples, 'tally_reconciler_repairs_total', { kind: 'streams.endedRoomGone' })).toBe(2);
    for (const queue of ['tally-maintenance', 'tally-webhooks', 'tally-recordings']) {
      expect(samples.some((s) => s.name === 'tally_queue_jobs' && s.labels['queue'] === queue)).toBe(true);
    }
    // No app of this test has a webhook URL: nothing is queued for delivery.
    expect(total(samples, 'tally_webhook_apps_queued')).toBe(0);
    // Every egress mode by both outcomes, zero or not.
    expect(samples.filter((s) => s.name === 'tally_recordings_finished_total')).toHaveLength(EGRESS_MODES.length * 2);
  });

  it('counts pending webhook deliveries as the tally-webhooks queue: waiting, in flight and delayed, summed over apps', async () => {
    const prisma = createPrismaClient(sut.stack.config.databaseUrl);
    const busy = await createTenant(sut.admin, 'metrics-busy');
    const quiet = await createTenant(sut.admin, 'metrics-quiet');
    try {
      // Pending rows as the outbox writes them, with no worker running to claim them: three due,
      // one waiting for a retry, and one of another app held by a (pretend) worker's live lease.
      const now = Date.now();
      const delivery = async (appId: string, n: number, extra: { nextAttemptAt?: Date; leaseOwner?: string; leasedUntil?: Date } = {}) => {
        const eventId = `evt_metrics_${appId.slice(-6)}_${n}`;
        await prisma.webhookEvent.create({ data: { id: eventId, appId, type: 'stream.ended', payload: {} } });
        await prisma.webhookDelivery.create({
          data: {
            id: `dlv_metrics_${appId.slice(-6)}_${n}`,
            appId,
            eventId,
            url: 'https://hooks.example.com/x',
            nextAttemptAt: new Date(now),
            ...extra,
          },
        });
      };
      for (const n of [1, 2, 3]) await delivery(busy.app.id, n);
      await delivery(busy.app.id, 4, { nextAttemptAt: new Date(now + 3_600_000) });
      await delivery(quiet.app.id, 1, { leaseOwner: 'elsewhere', leasedUntil: new Date(now + 3_600_000) });

      const samples = await scrape();
      const webhooks = (state: string) => total(samples, 'tally_queue_jobs', { queue: 'tally-webhooks', state });
      expect([webhooks('waiting'), webhooks('active'), webhooks('delayed'), webhooks('failed')]).toEqual([3, 1, 1, 0]);
      expect(samples.filter((s) => s.name === 'tally_queue_jobs' && s.labels['queue']?.startsWith('tally-webhooks.'))).toEqual([]);
      expect(total(samples, 'tally_webhook_apps_queued')).toBe(2);
      expect(total(samples, 'tally_webhook_app_backlog_max')).toBe(4);
      expect(total(samples, 'tally_webhook_deliveries', { app: busy.app.id, status: 'pending' })).toBe(4);
    } finally {
      await prisma.webhookEvent.deleteMany({ where: { appId: { in: [busy.app.id, quiet.app.id] } } });
      await prisma.$disconnect();
    }
  });

  it("follows an app's cameras as one connects and a viewer watches, and counts frames over maxFps as dropped", async () => {
    const { app, client, key } = await createTenant(sut.admin, 'metrics-cameras');
    const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'gate', maxFps: 2, maxFrameKb: 64 })).body;
    const idle = await scrape();
    expect(total(idle, 'tally_app_cameras', { app: app.id })).toBe(1);
    expect(total(idle, 'tally_app_cameras_connected', { app: app.id })).toBe(0);
    expect(total(idle, 'tally_app_camera_viewers', { app: app.id })).toBe(0);

    const cam = await TestCamera.connect(`${camera.ingestUrl}?key=${encodeURIComponent(camera.key)}`);
    const viewer = await TestSocketViewer.connect(camera.ingestUrl.replace(/\/ingest$/, '/ws'), { authorization: `Bearer ${key.key}` });
    // Four frames at once against a cap of two a second: the extra ones are dropped (twice the cap
    // is the most a camera may send before it is closed as too fast), the first reach the viewer.
    for (const jpeg of await generateJpegs(4)) await cam.send(jpeg);

    const frames = (samples: readonly Sample[], outcome: string) => total(samples, 'tally_camera_frames_total', { app: app.id, outcome });
    // The camera's presence key is written beside the frames, not before them: both are waited for.
    const live = await waitFor('all 4 frames counted and the camera connected', async () => {
      const samples = await scrape();
      const counted = frames(samples, 'published') + frames(samples, 'dropped') === 4;
      return counted && total(samples, 'tally_app_cameras_connected', { app: app.id }) === 1 ? samples : undefined;
    });
    expect(total(live, 'tally_app_cameras_connected', { app: app.id })).toBe(1);
    expect(total(live, 'tally_app_camera_viewers', { app: app.id })).toBe(1);
    expect(frames(live, 'published')).toBeGreaterThanOrEqual(1);
    expect(frames(live, 'dropped')).toBeGreaterThanOrEqual(1);
    expect(viewer.frames.length).toBeLessThanOrEqual(frames(live, 'published'));
    expect((await client.get<CameraView>(`/v1/apps/${app.id}/cameras/${camera.id}`)).body.viewers).toBe(1);

    viewer.close();
    await viewer.closed;
    await waitFor('the viewer gone from the gauge', async () =>
      total(await scrape(), 'tally_app_camera_viewers', { app: app.id }) === 0 ? true : undefined,
    );
    expect((await client.get<CameraView>(`/v1/apps/${app.id}/cameras/${camera.id}`)).body.viewers).toBe(0);
    cam.close();
    await cam.closed;
    await waitFor('the camera disconnected in the gauge', async () =>
      total(await scrape(), 'tally_app_cameras_connected', { app: app.id }) === 0 ? true : undefined,
    );
  });

  it("exports an app's open HLS sessions by status and every ended session by outcome", async () => {
    const { app, client } = await createTenant(sut.admin, 'metrics-hls');
    const stream = await createStream(client, app.id);
    // Nothing is published, so no session starts and the gauges stay at zero.
    expect((await client.post(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {})).status).toBe(409);

    const samples = await scrape();
    expect(samples.filter((s) => s.name === 'tally_app_hls_sessions' && s.labels['app'] === app.id).map((s) => s.labels['status'])).toEqual(
      ['starting', 'live'],
    );
    expect(total(samples, 'tally_app_hls_sessions', { app: app.id })).toBe(0);
    expect(samples.filter((s) => s.name === 'tally_hls_sessions_ended_total').map((s) => s.labels['outcome'])).toEqual([
      'stopped',
      'failed',
    ]);
  });
});
