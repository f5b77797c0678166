import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { DEFAULT_MODEL, DEFAULT_NODE_BUDGET, workerLimits } from '@tally/capacity';
import type { AppUsageView, RecordingView, StreamToken, StreamView, WorkerList } from '@tally/contracts';
import { acceptsTcp, type ApiClient, type Child, mediaNodeIp, startAppProcess, tcpListenersOfGroup, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { SignedReceiver } from './signed-receiver.js';

const IDLE_GRACE_S = 4;

describe('media workers run by the agent on demand (native runtime)', () => {
  let harness: ApiHarness;
  let worker: Child;
  let receiver: SignedReceiver;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    harness = await startApiHarness({ TALLY_WORKER_IDLE_GRACE_S: String(IDLE_GRACE_S) }, { workers: 'native' });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-runtime-${Date.now()}.log`));
    receiver = await SignedReceiver.start();
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await receiver?.stop();
    await worker?.stop();
    await harness?.stop();
  });

  const workers = async () => (await harness.admin.get<WorkerList>(`/v1/nodes/${harness.stack.nodeId}/workers`)).body;
  const egressWorker = async () => (await workers()).items.find((w) => w.kind === 'egress');

  async function liveStream(client: ApiClient, appId: string): Promise<StreamView> {
    const stream = await createStream(client, appId);
    const token = (await client.post<StreamToken>(`/v1/apps/${appId}/streams/${stream.id}/tokens`, { identity: 'cam', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token, { video: true }));
    return waitFor(
      'the stream to be live',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${appId}/streams/${stream.id}`)).body;
        return s.status === 'live' && s.publishers === 1 ? s : undefined;
      },
      30_000,
    );
  }

  const recordingIn = (client: ApiClient, appId: string, id: string, statuses: RecordingView['status'][]) =>
    waitFor(
      `recording ${id} to be ${statuses.join(' or ')}`,
      async () => {
        const r = (await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
        return statuses.includes(r.status) ? r : undefined;
      },
      90_000,
    );

  it('runs no egress while nothing records, starts one for the first recording, and stops it after the idle grace', async () => {
    const listed = await workers();
    expect(listed).toMatchObject({ nodeId: harness.stack.nodeId, runtime: 'native', items: [] });

    const tenant = await createTenant(harness.admin, 'on-demand');
    const stream = await liveStream(tenant.client, tenant.app.id);
    const started = await tenant.client.post<RecordingView>(`/v1/apps/${tenant.app.id}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);

    const running = await egressWorker();
    const limits = workerLimits(DEFAULT_MODEL, DEFAULT_NODE_BUDGET).egress;
    expect(running).toMatchObject({
      kind: 'egress',
      runtime: 'native',
      state: 'ready',
      limits: { ...limits },
      restarts: 0,
      idleStopAt: null,
    });
    expect(running?.limits.enforcedBy).toMatch(/^cgroup/);
    expect(running?.rssMb).toBeGreaterThan(0);
    // Ready means GStreamer's plugin registry is built: the first recording's pipeline does not pay for it.
    const gstCache = join(harness.stack.env['TALLY_WORKERS_DIR'] ?? '', 'egress', 'home', '.cache', 'gstreamer-1.0');
    expect(readdirSync(gstCache).filter((f) => /^registry\..+\.bin$/.test(f))).toHaveLength(1);

    await recordingIn(tenant.client, tenant.app.id, started.body.id, ['active']);
    // While it records, egress and its handlers listen on loopback only (the RoomComposite template
    // server): no status port lists the running requests on the node's media address.
    const listeners = await tcpListenersOfGroup(Number(running?.id));
    expect(listeners.length).toBeGreaterThan(0);
    expect(listeners.filter((l) => !['127.0.0.1', '[::1]'].includes(l.address))).toEqual([]);
    for (const { port } of listeners) expect(await acceptsTcp(mediaNodeIp(), port)).toBe(false);
    expect((await egressWorker())?.state).toBe('ready');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await tenant.client.post(`/v1/apps/${tenant.app.id}/recordings/${started.body.id}/stop`);
    const done = await recordingIn(tenant.client, tenant.app.id, started.body.id, ['complete', 'failed']);
    expect(done.status).toBe('complete');
    expect(done.durationS).toBeGreaterThan(1);

    // Idle: still there during the grace (its warm pool is reused), gone after it.
    const idle = await waitFor('the egress worker to be idle', async () => ((await egressWorker())?.idleStopAt ? true : undefined), 30_000);
    expect(idle).toBe(true);
    await waitFor(
      'the idle egress worker to stop',
      async () => ((await egressWorker()) === undefined ? true : undefined),
      (IDLE_GRACE_S + 20) * 1000,
    );
    expect((await workers()).items).toEqual([]);
  }, 240_000);

  it('ends the recording of a worker that dies with what was recorded, releases its capacity, tells the app, and serves the next recording on a new worker', async () => {
    const tenant = await createTenant(harness.admin, 'crash');
    await tenant.client.patch(`/v1/apps/${tenant.app.id}`, { webhookUrl: receiver.url });
    receiver.secret = (await tenant.client.post<{ secret: string }>(`/v1/apps/${tenant.app.id}/webhook-secret`)).body.secret;
    const stream = await liveStream(tenant.client, tenant.app.id);
    const started = await tenant.client.post<RecordingView>(`/v1/apps/${tenant.app.id}/streams/${stream.id}/recordings`, {});
    expect(started.status).toBe(201);
    const active = await recordingIn(tenant.client, tenant.app.id, started.body.id, ['active']);
    expect(active.mode).toBe('passthrough');
    // A few seconds of media in both track files, which a passthrough recording keeps (docs/recordings.md).
    await new Promise((resolve) => setTimeout(resolve, 5_000));

    const victim = await egressWorker();
    expect(victim).toBeDefined();
    process.kill(-Number(victim!.id), 'SIGKILL');

    const ended = await recordingIn(tenant.client, tenant.app.id, started.body.id, ['failed', 'complete']);
    expect(ended.status, ended.error ?? '').toBe('complete');
    expect(ended.error).toMatch(/egress failed: egress worker on .*: exit 137; the file keeps what was recorded/);
    expect(ended.durationS).toBeGreaterThan(2);
    const usage = (await tenant.client.get<AppUsageView>(`/v1/apps/${tenant.app.id}/usage`)).body;
    expect(usage.items.find((i) => i.quota === 'maxRecordings')?.used).toBe(0);
    const event = await waitFor(
      'recording.completed webhook',
      () => Promise.resolve(receiver.of('recording.completed', started.body.id)[0]),
      60_000,
    );
    expect(event.signatureValid).toBe(true);
    expect((await workers()).exits.egress?.reason).toBe('exit 137');

    const again = await tenant.client.post<RecordingView>(`/v1/apps/${tenant.app.id}/streams/${stream.id}/recordings`, {});
    expect(again.status).toBe(201);
    await recordingIn(tenant.client, tenant.app.id, again.body.id, ['active']);
    const replacement = await egressWorker();
    expect(replacement?.id).not.toBe(victim?.id);
    expect(replacement?.restarts).toBe(1);
  }, 240_000);

  it('is admin-only and 404s an unknown node', async () => {
    const tenant = await createTenant(harness.admin, 'nosy');
    expect((await tenant.client.get(`/v1/nodes/${harness.stack.nodeId}/workers`)).status).toBe(403);
    expect((await harness.admin.get('/v1/nodes/no-such-node/workers')).status).toBe(404);
  });
});
