import { createReadStream, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DEFAULT_MODEL, DEFAULT_NODE_BUDGET, workerLimits } from '@tally/capacity';
import type { RecordingView, StreamToken, StreamView, WorkerList } from '@tally/contracts';
import { type Child, startAppProcess, startDockerd, type TestDockerd, toolPath, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';

const IDLE_GRACE_S = 4;
const EGRESS_IMAGE = 'tally/egress:1.8.6';
/**
 * The images scripts/build-images.sh built and saved (`--save`). Tests run in a network namespace
 * with no route to an apt mirror, so the images are built beforehand on the host and loaded here.
 */
const IMAGES_TAR = join(dirname(dirname(toolPath('lk'))), 'images', 'tally-workers.tar');

describe('media workers run by the agent on demand (docker runtime)', () => {
  let dockerd: TestDockerd;
  let harness: ApiHarness;
  let worker: Child;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    if (!existsSync(IMAGES_TAR)) throw new Error(`${IMAGES_TAR} is missing: run scripts/build-images.sh --save ${IMAGES_TAR}`);
    dockerd = await startDockerd();
    const stream = await dockerd.docker.loadImage(createReadStream(IMAGES_TAR));
    await new Promise<void>((resolve, reject) =>
      dockerd.docker.modem.followProgress(stream, (error) => (error ? reject(error) : resolve())),
    );
    harness = await startApiHarness(
      { TALLY_WORKER_IDLE_GRACE_S: String(IDLE_GRACE_S), TALLY_DOCKER_SOCKET: dockerd.socketPath, TALLY_EGRESS_IMAGE: EGRESS_IMAGE },
      { workers: 'docker' },
    );
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-runtime-docker-${Date.now()}.log`));
  }, 240_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await worker?.stop();
    await harness?.stop();
    await dockerd?.stop();
  });

  const workers = async () => (await harness.admin.get<WorkerList>(`/v1/nodes/${harness.stack.nodeId}/workers`)).body;
  const egressWorker = async () => (await workers()).items.find((w) => w.kind === 'egress');
  const egressContainers = async () => dockerd.docker.listContainers({ all: true, filters: { name: ['tally-egress-'] } });

  it('starts an egress container for the first recording, completes it, and removes the container after the idle grace', async () => {
    expect(await workers()).toMatchObject({ nodeId: harness.stack.nodeId, runtime: 'docker', items: [] });
    expect(await egressContainers()).toEqual([]);

    const tenant = await createTenant(harness.admin, 'docker-on-demand');
    const created = await createStream(tenant.client, tenant.app.id);
    const base = `/v1/apps/${tenant.app.id}`;
    const token = (await tenant.client.post<StreamToken>(`${base}/streams/${created.id}/tokens`, { identity: 'cam', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token, { video: true }));
    await waitFor(
      'the stream to be live',
      async () => {
        const s = (await tenant.client.get<StreamView>(`${base}/streams/${created.id}`)).body;
        return s.status === 'live' && s.publishers === 1 ? s : undefined;
      },
      30_000,
    );
    const recordingIn = (id: string, statuses: RecordingView['status'][]) =>
      waitFor(
        `recording ${id} to be ${statuses.join(' or ')}`,
        async () => {
          const r = (await tenant.client.get<RecordingView>(`${base}/recordings/${id}`)).body;
          return statuses.includes(r.status) ? r : undefined;
        },
        90_000,
      );

    const started = await tenant.client.post<RecordingView>(`${base}/streams/${created.id}/recordings`, {});
    expect(started.status).toBe(201);
    const running = await egressWorker();
    expect(running).toMatchObject({
      kind: 'egress',
      runtime: 'docker',
      state: 'ready',
      limits: { ...workerLimits(DEFAULT_MODEL, DEFAULT_NODE_BUDGET).egress, enforcedBy: 'docker' },
      restarts: 0,
      idleStopAt: null,
    });
    const containers = await egressContainers();
    expect(containers.map((c) => [c.Image, c.State])).toEqual([[EGRESS_IMAGE, 'running']]);
    expect(containers[0]?.Id.startsWith(running?.id ?? '-')).toBe(true);

    await recordingIn(started.body.id, ['active']);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await tenant.client.post(`${base}/recordings/${started.body.id}/stop`);
    const done = await recordingIn(started.body.id, ['complete', 'failed']);
    expect(done).toMatchObject({ status: 'complete' });
    expect(done.durationS).toBeGreaterThan(1);

    await waitFor('the egress worker to be idle', async () => ((await egressWorker())?.idleStopAt ? true : undefined), 30_000);
    await waitFor(
      'the idle egress container to be removed',
      async () => ((await egressWorker()) === undefined && (await egressContainers()).length === 0 ? true : undefined),
      (IDLE_GRACE_S + 20) * 1000,
    );
    expect((await workers()).items).toEqual([]);
  }, 240_000);
});
