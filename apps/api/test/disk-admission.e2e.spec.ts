import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CapacityCheckResult, CapacityView, LimitRefusal, NodeList, StreamToken, StreamView } from '@tally/contracts';
import { waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, tracksUp, type Publisher } from '@tally/testing/media';

const MIB = 1024 * 1024;
const SIZE_MB = 32;

/**
 * A node whose recordings and live HLS directories are on a 32 MB filesystem (a tmpfs mounted here,
 * in the mount namespace the agent is started in): the agent reports it, and a recording that would
 * reserve more than it admits is refused before any egress is asked.
 */
describe('disk in admission', () => {
  let sut: ApiHarness;
  let mediaDir: string;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    mediaDir = mkdtempSync(join(tmpdir(), 'tally-small-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE_MB}m`, 'tmpfs', mediaDir]);
    sut = await startApiHarness({ TALLY_RECORDINGS_DIR: mediaDir, TALLY_HLS_DIR: join(mediaDir, 'hls') });
  });
  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await sut?.stop();
    if (mediaDir) {
      execFileSync('umount', [mediaDir]);
      rmSync(mediaDir, { recursive: true, force: true });
    }
  });

  async function liveStream(): Promise<{ appId: string; client: ApiHarness['admin']; stream: StreamView }> {
    const { app, client } = await createTenant(sut.admin, 'small disk');
    const stream = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    publishers.push(await joinAndPublish(token.url, token.token));
    await waitFor('the publisher live', async () =>
      (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.publishers === 1 ? true : undefined,
    );
    await tracksUp(client, app.id, stream.id);
    return { appId: app.id, client, stream };
  }

  it('shows the small filesystem with its roles and watermarks in GET /v1/nodes and GET /v1/capacity', async () => {
    const nodes = (await sut.admin.get<NodeList>('/v1/nodes')).body;
    const node = nodes.items.find((n) => n.nodeId === sut.stack.nodeId)!;
    const small = node.disks.find((d) => d.mount === mediaDir);

    expect(small).toMatchObject({
      key: expect.stringMatching(new RegExp(`^${sut.stack.nodeId}:\\d+:\\d+$`)) as string,
      roles: ['recordings', 'hls', 'ladders'],
      dirs: [mediaDir, join(mediaDir, 'hls')],
      totalBytes: SIZE_MB * MIB,
      reservedMb: 0,
    });
    expect(small!.freeBytes).toBeGreaterThan((SIZE_MB - 2) * MIB);
    expect(small!.stopFreeBytes).toBeLessThan(small!.alertFreeBytes);
    expect(small!.admissibleMb).toBe(Math.floor((small!.freeBytes - small!.stopFreeBytes) / MIB));
    expect(node.filesystems?.find((f) => f.mount === mediaDir)?.totalBytes).toBe(SIZE_MB * MIB);

    const capacity = (await sut.admin.get<CapacityView>('/v1/capacity')).body;
    const pooled = capacity.nodes.find((n) => n.nodeId === sut.stack.nodeId)!.disks.find((d) => d.key === small!.key);
    expect(pooled).toMatchObject({ totalBytes: SIZE_MB * MIB, admissibleMb: small!.admissibleMb, reservedMb: 0 });
    expect(capacity.nodes.find((n) => n.nodeId === sut.stack.nodeId)!.fits['egress.passthrough']).toBe(0);
  });

  it('exports the filesystem, its watermarks and its reservations to Prometheus', async () => {
    const disk = (await sut.admin.get<NodeList>('/v1/nodes')).body.items
      .find((n) => n.nodeId === sut.stack.nodeId)!
      .disks.find((d) => d.mount === mediaDir)!;

    const metrics = await (await sut.anonymous.raw('/metrics')).text();

    const labels = `node="${sut.stack.nodeId}",filesystem="${disk.key}",mount="${mediaDir}",roles="recordings,hls,ladders"`;
    expect(metrics).toContain(`tally_node_disk_total_bytes{${labels}} ${SIZE_MB * MIB}`);
    expect(metrics).toContain(`tally_node_disk_stop_free_bytes{${labels}} ${disk.stopFreeBytes}`);
    expect(metrics).toContain(`tally_node_disk_alert_free_bytes{${labels}} ${disk.alertFreeBytes}`);
    expect(metrics).toContain(`tally_node_disk_reserved_bytes{${labels}} 0`);
    const free = metrics.split('\n').find((line) => line.startsWith(`tally_node_disk_free_bytes{${labels}} `));
    expect(Number(free?.split(' ').pop())).toBeGreaterThan(disk.stopFreeBytes);
  });

  it('refuses a recording that would not fit with 429 node.disk, limit, used, requested and Retry-After, as capacity/check does', async () => {
    const { appId, client, stream } = await liveStream();
    const disk = (await sut.admin.get<NodeList>('/v1/nodes')).body.items
      .find((n) => n.nodeId === sut.stack.nodeId)!
      .disks.find((d) => d.mount === mediaDir)!;

    const refused = await client.post<LimitRefusal>(`/v1/apps/${appId}/streams/${stream.id}/recordings`, {});

    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.body.error).toMatchObject({
      code: 'capacity_exhausted',
      resource: 'node.disk',
      used: 0,
      retryAfterS: 30,
    });
    // Node ids are the operator's: an app key's refusal names the resource, not the node.
    expect(refused.body.error).not.toHaveProperty('nodeId');
    const { limit, requested } = refused.body.error;
    // Free space moves a little between reads (the filesystem is also the egress scratch of nobody): within a MB.
    expect(Math.abs(limit - disk.admissibleMb)).toBeLessThanOrEqual(1);
    expect(requested).toBeGreaterThan(limit);
    expect((await client.get<{ items: unknown[] }>(`/v1/apps/${appId}/recordings`)).body.items).toEqual([]);

    const check = (await client.post<CapacityCheckResult>(`/v1/apps/${appId}/capacity/check`, { kind: 'egress.passthrough', count: 1 }))
      .body;
    expect(check).toMatchObject({
      admitted: false,
      code: 'capacity_exhausted',
      resource: 'node.disk',
      used: 0,
      requested,
      retryAfterS: 30,
    });
  });

  it('refuses live HLS on the same filesystem for the same reason', async () => {
    const { appId, client, stream } = await liveStream();

    const refused = await client.post<LimitRefusal>(`/v1/apps/${appId}/streams/${stream.id}/hls`, {});

    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'capacity_exhausted', resource: 'node.disk', used: 0 });
  });
});
