import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppUsageView, AppView, LimitRefusal, NodeDiskView, NodeList, RecordingView, WebhookSecretView } from '@tally/contracts';
import { waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { SignedReceiver } from '../../apps/api/test/signed-receiver.js';
import {
  backdateRecordingEnd,
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
import { type SmallDisk, smallRecordingsDisk } from './small-disk.js';

const MB = 1024 * 1024;

/** The filesystem of the report: a recording-heavy node's disk, small enough to fill in a test. */
const DISK_MB = 160;
const RECORD_MS = 8_000;
const DAY_MS = 86_400_000;

/** The installed node's filesystem holding the recordings, as `GET /v1/nodes` shows it. */
async function recordingsDisk(node: Installed): Promise<NodeDiskView | undefined> {
  const nodes = (await node.admin.get<NodeList>('/v1/nodes')).body.items;
  return nodes.flatMap((n) => n.disks).find((d) => d.roles.includes('recordings'));
}

/** The value of a `/metrics` series whose labels include `roles` with recordings. */
function recordingsSeries(metrics: string, name: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{`) && /roles="[^"]*recordings/.test(l));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

async function recording(tenant: Tenant, id: string): Promise<RecordingView> {
  return (await tenant.client.get<RecordingView>(`/v1/apps/${tenant.app.id}/recordings/${id}`)).body;
}

describe('an installed node whose recordings disk fills up', () => {
  let node: Installed;
  let tenant: Tenant;
  let receiver: SignedReceiver;
  let disk: SmallDisk;
  const publishers: Publisher[] = [];
  /** The recording the watermark stopped; then the one the storage cap counts, which retention deletes. */
  let stoppedAtWatermark: RecordingView | undefined;
  let capped: RecordingView | undefined;

  beforeAll(async () => {
    node = installed();
    disk = await smallRecordingsDisk(node, DISK_MB);
    receiver = await SignedReceiver.start();
    tenant = await createTenant(node.admin, 'acceptance storage');
    const rotated = await tenant.client.post<WebhookSecretView>(`/v1/apps/${tenant.app.id}/webhook-secret`);
    receiver.secret = rotated.body.secret;
    expect((await tenant.client.patch<AppView>(`/v1/apps/${tenant.app.id}`, { webhookUrl: receiver.url })).status).toBe(200);
  });

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await receiver?.stop();
    await disk?.remove();
  });

  it('stops a passthrough recording of a live publisher before the disk is full; it completes with the disk as its reason and plays', async () => {
    const stream = await createStream(tenant, 'filling');
    const token = await streamToken(tenant, stream.id, 'publisher', 'camera');
    publishers.push(await joinAndPublish(token.url, token.token, { video: true }));
    await streamLive(tenant, stream.id);
    await tracksUp(tenant.client, tenant.app.id, stream.id);
    const started = await tenant.client.post<RecordingView>(`/v1/apps/${tenant.app.id}/streams/${stream.id}/recordings`, {
      mode: 'passthrough',
    });
    expect(started.status).toBe(201);
    const active = await waitFor('the recording to be active', async () => {
      const r = await recording(tenant, started.body.id);
      return r.status === 'active' ? r : undefined;
    });
    await new Promise((r) => setTimeout(r, RECORD_MS));

    // As in the report: the filesystem filled to its last 3 MB while the publisher goes on.
    const fullAt = Date.now();
    await disk.fillLeaving(3 * MB);
    const recordedS = (fullAt - Date.parse(active.startedAt ?? '')) / 1000;

    const done = await waitFor(
      'the recording to end',
      async () => {
        const r = await recording(tenant, active.id);
        return r.status === 'complete' || r.status === 'failed' ? r : undefined;
      },
      120_000,
    );
    expect(done).toMatchObject({ status: 'complete', endReason: 'disk_full', mode: 'passthrough' });
    stoppedAtWatermark = done;
    expect(done.durationS ?? 0).toBeGreaterThan(recordedS - 2);

    // The seconds recorded before the watermark download and play.
    const response = await tenant.client.raw(`/v1/apps/${tenant.app.id}/recordings/${done.id}/file`);
    expect(response.status).toBe(200);
    const file = join(tmpdir(), `${done.id}.${done.location.split('.').pop() ?? 'bin'}`);
    writeFileSync(file, Buffer.from(await response.arrayBuffer()));
    const media = await probe(file);
    expect(media.streams).toEqual(['audio', 'video']);
    expect(media.durationS).toBeGreaterThan(recordedS - 2);
    await decodes(file);
    rmSync(file);

    const completed = await waitFor(
      'a signed recording.completed',
      () => Promise.resolve(receiver.of('recording.completed', done.id)[0]),
      60_000,
    );
    expect(completed.signatureValid).toBe(true);
    expect(completed.body.data).toMatchObject({ id: done.id, endReason: 'disk_full' });
  });

  it('while the disk stays full: the agent reports it below its alert line, /metrics says so, and a new recording is refused naming node.disk', async () => {
    // The agent measures the filesystem in its heartbeat: wait until the fill shows.
    const full = await waitFor(
      'the agent to report the full recordings disk',
      async () => {
        const d = await recordingsDisk(node);
        return d !== undefined && d.freeBytes < d.alertFreeBytes ? d : undefined;
      },
      60_000,
    );
    expect(full.totalBytes).toBeGreaterThan((DISK_MB - 8) * MB);
    expect(full.totalBytes).toBeLessThanOrEqual(DISK_MB * MB);
    expect(full.stopFreeBytes).toBeLessThan(full.alertFreeBytes);

    // What TallyNodeDiskLow compares (deploy/prometheus/alerts.yml): free below the alert line.
    const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text();
    const free = recordingsSeries(metrics, 'tally_node_disk_free_bytes');
    const alert = recordingsSeries(metrics, 'tally_node_disk_alert_free_bytes');
    expect(free).toBeDefined();
    expect(alert).toBeDefined();
    expect(free ?? Infinity).toBeLessThan(alert ?? 0);

    const stream = await createStream(tenant, 'refused');
    const token = await streamToken(tenant, stream.id, 'publisher', 'camera');
    publishers.push(await joinAndPublish(token.url, token.token, { video: true }));
    await streamLive(tenant, stream.id);
    await tracksUp(tenant.client, tenant.app.id, stream.id);
    const refused = await tenant.client.post<LimitRefusal>(`/v1/apps/${tenant.app.id}/streams/${stream.id}/recordings`, {
      mode: 'passthrough',
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'capacity_exhausted', resource: 'node.disk' });
    const { limit, used, requested } = refused.body.error;
    expect(requested).toBeGreaterThan(limit - used);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('caps what an app may hold: the admin sets the cap at what its recordings hold, its usage shows it, and a recording start is refused naming app.storage until the cap is lifted', async () => {
    // The other process gives the disk back; recording resumes once the agent reports the room.
    await disk.emptyFillers();
    await waitFor(
      'the agent to report the recordings disk clear',
      async () => {
        const d = await recordingsDisk(node);
        return d !== undefined && d.freeBytes > d.alertFreeBytes ? d : undefined;
      },
      60_000,
    );
    const stream = await createStream(tenant, 'capped');
    const token = await streamToken(tenant, stream.id, 'publisher', 'camera');
    publishers.push(await joinAndPublish(token.url, token.token, { video: true }));
    await streamLive(tenant, stream.id);
    await tracksUp(tenant.client, tenant.app.id, stream.id);
    // Passthrough: a composite started right after another one on the same publisher can stay STARTING (docs/recordings.md).
    const start = <T>() => tenant.client.post<T>(`/v1/apps/${tenant.app.id}/streams/${stream.id}/recordings`, { mode: 'passthrough' });
    const stopAndKeep = async (id: string) => {
      expect((await tenant.client.post(`/v1/apps/${tenant.app.id}/recordings/${id}/stop`)).status).toBe(200);
      return waitFor(
        'the recording to be complete',
        async () => {
          const r = await recording(tenant, id);
          return r.status === 'complete' || r.status === 'failed' ? r : undefined;
        },
        120_000,
      );
    };

    // A recording that surely holds more than a MB: it runs until egress has written that much.
    const started = await start<RecordingView>();
    expect(started.status).toBe(201);
    await waitFor(
      'the recording to have written over a MB',
      async () => ((await disk.writtenBy(tenant.app.id, started.body.id)) > 1.2 * MB ? true : undefined),
      120_000,
    );
    capped = await stopAndKeep(started.body.id);
    expect(capped.status).toBe('complete');
    const held = (await tenant.client.get<AppUsageView>(`/v1/apps/${tenant.app.id}/usage`)).body.storage;
    expect(held.usedBytes).toBeGreaterThan(MB);

    const capMb = Math.floor(held.usedBytes / MB);
    expect((await node.admin.patch<AppView>(`/v1/apps/${tenant.app.id}`, { maxStorageMb: capMb })).status).toBe(200);
    const usage = (await tenant.client.get<AppUsageView>(`/v1/apps/${tenant.app.id}/usage`)).body.storage;
    expect(usage).toMatchObject({ usedBytes: held.usedBytes, limitMb: capMb });
    expect(usage.usedMb).toBeGreaterThanOrEqual(capMb);

    const refused = await start<LimitRefusal>();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.storage', limit: capMb, requested: 0 });
    expect(refused.body.error.used).toBeGreaterThanOrEqual(capMb);
    // Only deleting recordings frees it: no Retry-After.
    expect(refused.headers.get('retry-after')).toBeNull();

    expect((await node.admin.patch<AppView>(`/v1/apps/${tenant.app.id}`, { maxStorageMb: null })).status).toBe(200);
    expect((await tenant.client.get<AppUsageView>(`/v1/apps/${tenant.app.id}/usage`)).body.storage.limitMb).toBeNull();
    const again = await start<RecordingView>();
    expect(again.status).toBe(201);
    await waitFor(
      'the recording to be active',
      async () => ((await recording(tenant, again.body.id)).status === 'active' ? true : undefined),
      // An egress stuck STARTING is replaced by the next sweep after 20 s.
      (20 + Number(node.env['TALLY_SWEEP_INTERVAL_S'] ?? '30') + 60) * 1000,
    );
    expect((await stopAndKeep(again.body.id)).status).toBe('complete');
  });

  it('deletes a recording older than the app keeps, its file and download with it, and sends a signed recording.deleted; what ended since is kept', async () => {
    const old = capped;
    const recent = stoppedAtWatermark;
    if (old === undefined || recent === undefined) throw new Error('needs the recordings of the tests above');
    expect(await disk.holds(old.location)).toBe(true);
    const before = (await tenant.client.get<AppUsageView>(`/v1/apps/${tenant.app.id}/usage`)).body.storage.usedBytes;

    expect((await node.admin.patch<AppView>(`/v1/apps/${tenant.app.id}`, { recordingRetentionDays: 1 })).status).toBe(200);
    await backdateRecordingEnd(node, old.id, new Date(Date.now() - 2 * DAY_MS));

    // The worker's sweep applies retention every TALLY_SWEEP_INTERVAL_S.
    const sweepS = Number(node.env['TALLY_SWEEP_INTERVAL_S'] ?? '30');
    const deleted = await waitFor(
      'a signed recording.deleted',
      () => Promise.resolve(receiver.of('recording.deleted', old.id)[0]),
      (2 * sweepS + 60) * 1000,
    );
    expect(deleted.signatureValid).toBe(true);
    expect(deleted.body.data).toMatchObject({ id: old.id, status: 'complete' });
    expect((await tenant.client.get(`/v1/apps/${tenant.app.id}/recordings/${old.id}`)).status).toBe(404);
    expect((await tenant.client.raw(`/v1/apps/${tenant.app.id}/recordings/${old.id}/file`)).status).toBe(404);
    expect(await disk.holds(old.location)).toBe(false);
    const after = (await tenant.client.get<AppUsageView>(`/v1/apps/${tenant.app.id}/usage`)).body.storage;
    expect(after).toMatchObject({ usedBytes: before - (old.sizeBytes ?? 0), recordingRetentionDays: 1 });

    expect((await tenant.client.get(`/v1/apps/${tenant.app.id}/recordings/${recent.id}`)).status).toBe(200);
    expect(await disk.holds(recent.location)).toBe(true);
  });
});
