import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import type { JoinTokenView, NodeList, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { type ApiClient, type Child, freePort, startAppProcess, TEST_NODE_BUDGET, type TestObjectStore, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { forward, installWithPrivateMounts, nodeHome, readableCheckout, removeHome } from './joined-node.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { recordingIn } from './recording-client.js';

const run = promisify(execFile);

/**
 * An origin with object storage (the test stack, a real S3 server run as install.sh --object-store runs
 * it, with the key broker that gives the node a key of its own) and a worker node that joins it
 * with ./install.sh --join for real, without the origin's recordings directory: the node runs in a
 * mount namespace of its own where that path is an empty directory of its own. Its egress records,
 * its agent stages the files in the bucket, the origin's worker finalises them.
 */
describe('a joined worker node without a shared recordings directory records into the bucket', () => {
  let sut: ApiHarness;
  let worker: Child;
  let store: TestObjectStore;
  let prisma: PrismaClient;
  let nodeDir = '';
  let workerHome = '';
  const forwarders: Server[] = [];
  const publishers: Publisher[] = [];
  const nodeName = `w-${randomBytes(3).toString('hex')}`;

  const recordingsDir = () => sut.stack.config.recordings.dir;
  const nodes = async () => (await sut.admin.get<NodeList>('/v1/nodes')).body.items;

  beforeAll(async () => {
    await readableCheckout();
    const redisPort = await freePort();
    // A short sweep, as in production the worker's sweep queues again what waits.
    sut = await startApiHarness(
      { TALLY_CLUSTER_REDIS_URL: `redis://127.0.0.1:${redisPort}`, TALLY_SWEEP_INTERVAL_S: '2' },
      { objectStore: 'nodeKeys' },
    );
    // The origin's Redis where the cluster URL says (install.sh --cluster-bind on a real origin).
    forwarders.push(await forward('127.0.0.1', redisPort, sut.stack.redis.port));
    store = sut.stack.objectStore!;
    prisma = createPrismaClient(sut.stack.config.databaseUrl);
    worker = await startAppProcess('worker', sut.stack.env, join(tmpdir(), `tally-worker-${nodeName}.log`));

    const token = (await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { name: nodeName, role: 'worker' })).body.token;
    nodeDir = mkdtempSync(join(tmpdir(), 'tally-node-recordings-'));
    mkdirSync(recordingsDir(), { recursive: true });
    workerHome = nodeHome();
    const joined = await installWithPrivateMounts(
      [{ source: nodeDir, target: recordingsDir() }],
      [
        ...['--join', sut.stack.config.http.publicUrl, '--token', token, '--role', 'worker', '--name', nodeName, '--insecure-http'],
        ...['--home', workerHome, '--no-provision', '--no-systemd', '--no-sysctl', '--offline', '--node-ip', '127.0.0.1'],
      ],
      { TALLY_HEARTBEAT_INTERVAL_S: '1', ...TEST_NODE_BUDGET },
    );
    expect(joined.code, joined.output).toBe(0);
    expect(joined.output).toContain(`recordings are staged in the origin's bucket ${store.bucket}`);
    const env = readFileSync(join(workerHome, 'tally.env'), 'utf8');
    expect(env).toContain(`TALLY_RECORDINGS_DIR=${recordingsDir()}\n`);
    expect(env).toContain(`TALLY_S3_BUCKET=${store.bucket}\n`);
    expect(env).toContain(`TALLY_S3_ENDPOINT=${store.endpoint}\n`);
    // Its egress signs its room tokens with the node's own LiveKit key (docs/adr/0025), never the cluster's.
    expect(env).toContain(`LIVEKIT_API_KEY=tally-node-${nodeName}\n`);
    expect(env).not.toContain(sut.stack.livekit.apiSecret);
    // A key of the node's own (docs/adr/0045), allowed to stage only: what follows proves it is enough.
    expect(env).toContain(`TALLY_S3_ACCESS_KEY=tally-node-${nodeName}\n`);
    expect((await nodes()).find((n) => n.nodeId === nodeName)).toMatchObject({ role: 'worker', status: 'active' });
  }, 600_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    if (workerHome && existsSync(join(workerHome, 'run', 'mode'))) await installWithPrivateMounts([], ['--stop', '--home', workerHome]);
    await worker?.stop();
    await prisma?.$disconnect();
    for (const server of forwarders) server.close();
    await sut?.stop();
    if (workerHome) removeHome(workerHome);
  });

  /** A tenant with one stream and one live publisher (camera and microphone, or the microphone alone). */
  async function liveStream(name: string, video = true): Promise<{ appId: string; client: ApiClient; stream: StreamView }> {
    const { app, client } = await createTenant(sut.admin, `${name}-${randomBytes(3).toString('hex')}`);
    const stream = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    publishers.push(await joinAndPublish(token.url, token.token, { video }));
    await tracksUp(client, app.id, stream.id, video ? [TrackKind.KIND_VIDEO, TrackKind.KIND_AUDIO] : [TrackKind.KIND_AUDIO]);
    return { appId: app.id, client, stream };
  }

  /** Starts a recording while the origin takes no new work (an operator's PATCH): admission can only place it on the node. */
  async function startOnNode(client: ApiClient, appId: string, streamId: string, mode: string): Promise<RecordingView> {
    expect((await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'disabled' })).status).toBe(200);
    try {
      const started = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${streamId}/recordings`, { mode });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      expect((await prisma.recording.findUniqueOrThrow({ where: { id: started.body.id } })).nodeId).toBe(nodeName);
      await recordingIn(client, appId, started.body.id, ['active'], 180_000);
      return started.body;
    } finally {
      await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'active' });
    }
  }

  const stop = async (client: ApiClient, appId: string, id: string) => {
    expect((await client.post(`/v1/apps/${appId}/recordings/${id}/stop`)).status).toBe(200);
  };

  const inBucket = (client: ApiClient, appId: string, id: string) =>
    waitFor(
      `recording ${id} in the bucket`,
      async () => {
        const r = (await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
        return r.status === 'failed' || r.storage === 's3' ? r : undefined;
      },
      300_000,
    );

  /** The node's own files of an app (what its egress wrote and has not staged yet). */
  const onNode = (appId: string) => {
    const dir = join(nodeDir, '.incoming', appId);
    return existsSync(dir) ? readdirSync(dir) : [];
  };

  /** In the bucket, complete and whole: listed by a real S3 client, fetched and probed through the API's redirect. */
  async function expectDownloadable(client: ApiClient, appId: string, done: RecordingView, streams: string[]): Promise<void> {
    expect(done).toMatchObject({ status: 'complete', storage: 's3', error: null, uploadError: null });
    expect(done.durationS).toBeGreaterThan(1);
    expect(done.sha256).toMatch(/^[0-9a-f]{64}$/);
    const objects = await store.list();
    expect(objects).toContainEqual({ key: done.location, size: done.sizeBytes });
    // Nothing left in the staging area, nothing on the node, nothing local on the origin.
    expect(objects.filter((o) => o.key.startsWith(`incoming/${appId}/`))).toEqual([]);
    expect(onNode(appId)).toEqual([]);
    // The worker points the row at the object before it deletes the local copy: wait for the delete.
    const local = join(recordingsDir(), done.location);
    await waitFor('the local copy deleted', () => Promise.resolve(existsSync(local) ? undefined : true), 60_000);

    const redirect = await client.raw(`/v1/apps/${appId}/recordings/${done.id}/file`);
    expect(redirect.status).toBe(302);
    const url = redirect.headers.get('location') ?? '';
    const path = join(tmpdir(), `node-s3-${done.id}.${done.location.split('.').pop() ?? 'bin'}`);
    await run('curl', ['-sf', '-o', path, url]);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(done.sha256);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', url]);
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual(streams);
  }

  // Passthrough (two Track egresses joined on the origin) and a Track egress (audio only). The
  // composites take the same path; under this machine's load a composite beside other egresses can
  // stay STARTING (docs/recordings.md), so they are left to object-storage.e2e on the origin.
  it.each([
    ['passthrough', true, ['audio', 'video']],
    ['track', false, ['audio']],
  ] as const)(
    'records %s on the node; the recording ends complete in the bucket and downloads through the redirect',
    async (mode, video, streams) => {
      const { appId, client, stream } = await liveStream(`node-${mode}`, video);
      const started = await startOnNode(client, appId, stream.id, 'auto');
      expect(started.mode).toBe(mode);
      await new Promise((r) => setTimeout(r, 4_000));
      await stop(client, appId, started.id);
      const done = await inBucket(client, appId, started.id);
      await expectDownloadable(client, appId, done, [...streams]);
    },
    420_000,
  );

  it('keeps the recording on the node while the store is down, and it ends in the bucket once the store is back', async () => {
    const { appId, client, stream } = await liveStream('node-outage');
    const started = await startOnNode(client, appId, stream.id, 'auto');
    await new Promise((r) => setTimeout(r, 4_000));
    await store.pause();
    try {
      await stop(client, appId, started.id);
      // The node was asked for the files and could not stage them: it keeps them, and the recording waits.
      await waitFor(
        'a staging attempt refused by the stopped store',
        () => Promise.resolve(/staging \S+ failed/.test(readFileSync(join(workerHome, 'log', 'agent.log'), 'utf8')) ? true : undefined),
        300_000,
      );
      expect(onNode(appId).length).toBeGreaterThan(0);
      expect((await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${started.id}`)).body.status).toBe('ending');
    } finally {
      await store.start();
    }
    const done = await inBucket(client, appId, started.id);
    await expectDownloadable(client, appId, done, ['audio', 'video']);
  }, 600_000);
});
