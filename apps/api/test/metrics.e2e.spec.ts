import type { CapacityView } from '@tally/contracts';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsController } from '../src/metrics/metrics.controller.js';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

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
    expect(samples.filter((s) => s.name === 'tally_recordings_finished_total')).toHaveLength(6);
  });
});
