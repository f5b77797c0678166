import { execFile } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import type { RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { type ApiClient, type Child, freePort, startAppProcess, type TestObjectStore, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { download, recordingIn } from './recording-client.js';

const run = promisify(execFile);

describe('recordings in object storage (a real S3 server)', () => {
  let harness: ApiHarness;
  let worker: Child;
  let store: TestObjectStore;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    // A short sweep: it queues again the uploads whose retries ran out while the store was down.
    harness = await startApiHarness({ TALLY_SWEEP_INTERVAL_S: '2' }, { egress: true, objectStore: true });
    store = harness.stack.objectStore!;
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-s3-${Date.now()}.log`));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await worker?.stop();
    await harness?.stop();
  });

  /** A tenant with one stream and one live publisher (camera and microphone, or the microphone alone). */
  async function liveStream(name: string, video: boolean): Promise<{ appId: string; client: ApiClient; stream: StreamView }> {
    const { app, client } = await createTenant(harness.admin, name);
    const stream = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;
    publishers.push(await joinAndPublish(token.url, token.token, { video }));
    await tracksUp(client, app.id, stream.id, video ? [TrackKind.KIND_VIDEO, TrackKind.KIND_AUDIO] : [TrackKind.KIND_AUDIO]);
    return { appId: app.id, client, stream };
  }

  /** Records a few seconds and stops; answers the recording once the worker has checked its file. */
  async function record(client: ApiClient, appId: string, streamId: string, mode: string): Promise<RecordingView> {
    const started = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${streamId}/recordings`, { mode });
    expect(started.status).toBe(201);
    await recordingIn(client, appId, started.body.id, ['active']);
    await new Promise((r) => setTimeout(r, 4_000));
    expect((await client.post(`/v1/apps/${appId}/recordings/${started.body.id}/stop`)).status).toBe(200);
    return recordingIn(client, appId, started.body.id, ['complete', 'failed']);
  }

  function inBucket(client: ApiClient, appId: string, id: string): Promise<RecordingView> {
    return waitFor(
      `recording ${id} in the bucket`,
      async () => {
        const r = (await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
        return r.storage === 's3' ? r : undefined;
      },
      120_000,
    );
  }

  function sha256(path: string): string {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  }

  it.each([
    ['passthrough', 'auto', true],
    ['track_composite', 'track_composite', true],
    ['track', 'auto', false],
  ] as const)(
    'records %s into the bucket; the download is a redirect to a signed URL that plain clients fetch, ranges included',
    async (mode, asked, video) => {
      const { appId, client, stream } = await liveStream(`s3-${mode}`, video);
      const complete = await record(client, appId, stream.id, asked);
      expect(complete).toMatchObject({ status: 'complete', mode, error: null });
      const uploaded = await inBucket(client, appId, complete.id);
      expect(uploaded).toMatchObject({ uploadError: null, sizeBytes: complete.sizeBytes, sha256: complete.sha256 });
      expect(uploaded.durationS).toBeGreaterThan(1);

      // A real S3 client sees the object, of the recording's size; the local copy is gone.
      expect(await store.list()).toContainEqual({ key: uploaded.location, size: uploaded.sizeBytes });
      expect(existsSync(join(harness.stack.config.recordings.dir, uploaded.location))).toBe(false);

      const redirect = await client.raw(`/v1/apps/${appId}/recordings/${complete.id}/file`);
      expect(redirect.status).toBe(302);
      const url = redirect.headers.get('location') ?? '';
      expect(url.startsWith(`${store.endpoint}/${store.bucket}/${uploaded.location}?`)).toBe(true);

      const range = await fetch(url, { headers: { range: 'bytes=0-99' } });
      expect(range.status).toBe(206);
      expect((await range.arrayBuffer()).byteLength).toBe(100);

      const path = join(tmpdir(), `s3-${complete.id}.${uploaded.location.split('.').pop() ?? 'bin'}`);
      await run('curl', ['-sf', '-o', path, url]);
      expect(sha256(path)).toBe(complete.sha256);
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', url]);
      expect(Number(stdout.trim())).toBeGreaterThan(1);
    },
    240_000,
  );

  it('keeps every recording while the store is down (complete on local storage, with the reason), and uploads each once it is back', async () => {
    const a = await liveStream('s3-outage-a', true);
    const b = await liveStream('s3-outage-b', true);
    await store.pause();
    try {
      // Passthrough both: a composite started beside other egresses can stay STARTING, and only
      // passthrough's egresses are replaced then (docs/recordings.md).
      const recorded = await Promise.all([record(a.client, a.appId, a.stream.id, 'auto'), record(b.client, b.appId, b.stream.id, 'auto')]);
      const held = await Promise.all(
        recorded.map((r, i) =>
          waitFor(
            `the failed upload of ${r.id} noted`,
            async () => {
              const c = i === 0 ? a : b;
              const now = (await c.client.get<RecordingView>(`/v1/apps/${c.appId}/recordings/${r.id}`)).body;
              return now.uploadError !== null ? now : undefined;
            },
            120_000,
          ),
        ),
      );
      for (const r of held) {
        expect(r).toMatchObject({ status: 'complete', storage: 'local' });
        expect(r.uploadError).toMatch(/^upload to object storage failed: /);
      }
      // Downloadable meanwhile, from local storage, byte for byte.
      const local = await download(a.client, a.appId, held[0]!);
      expect(sha256(local)).toBe(held[0]!.sha256);
    } finally {
      await store.start();
    }

    const [ua, ub] = await Promise.all([
      inBucket(a.client, a.appId, (await lastRecording(a.client, a.appId)).id),
      inBucket(b.client, b.appId, (await lastRecording(b.client, b.appId)).id),
    ]);
    const objects = await store.list();
    for (const r of [ua, ub]) {
      expect(r.uploadError).toBeNull();
      expect(objects).toContainEqual({ key: r.location, size: r.sizeBytes });
    }
  }, 360_000);

  it('deleting a recording in the bucket deletes its object', async () => {
    const { appId, client, stream } = await liveStream('s3-delete', false);
    const uploaded = await inBucket(client, appId, (await record(client, appId, stream.id, 'auto')).id);
    expect((await store.list()).map((o) => o.key)).toContain(uploaded.location);
    expect((await client.delete(`/v1/apps/${appId}/recordings/${uploaded.id}`)).status).toBe(204);
    expect((await store.list()).map((o) => o.key)).not.toContain(uploaded.location);
  }, 240_000);

  it('signs download links for the public endpoint, which a proxy in front of the store serves (Host passed on, as Caddy does)', async () => {
    const proxy = await hostKeepingProxy(store.endpoint);
    const port = await freePort();
    const env = { ...harness.stack.env, TALLY_PORT: String(port), TALLY_S3_PUBLIC_ENDPOINT: proxy.url };
    const publicApi = await startAppProcess('api', env, join(tmpdir(), `tally-api-s3-public-${Date.now()}.log`));
    try {
      const { appId, client, stream } = await liveStream('s3-public', false);
      const uploaded = await inBucket(client, appId, (await record(client, appId, stream.id, 'auto')).id);
      const viaPublic = client.at(`http://127.0.0.1:${port}`);

      const redirect = await viaPublic.raw(`/v1/apps/${appId}/recordings/${uploaded.id}/file`);
      expect(redirect.status).toBe(302);
      const url = new URL(redirect.headers.get('location') ?? '');
      expect(url.origin).toBe(proxy.url);
      expect(url.pathname).toBe(`/${store.bucket}/${uploaded.location}`);

      const path = join(tmpdir(), `s3-public-${uploaded.id}.bin`);
      await run('curl', ['-sf', '-o', path, url.href]);
      expect(sha256(path)).toBe(uploaded.sha256);
      // The signature covers the host: the same link sent to the store's own address is refused.
      expect((await fetch(`${store.endpoint}${url.pathname}${url.search}`)).status).toBe(403);
    } finally {
      await publicApi.stop();
      await proxy.stop();
    }
  }, 240_000);

  async function lastRecording(client: ApiClient, appId: string): Promise<RecordingView> {
    const list = (await client.get<{ items: RecordingView[] }>(`/v1/apps/${appId}/recordings`)).body.items;
    expect(list).toHaveLength(1);
    return list[0]!;
  }
});

/** A reverse proxy to `target` that passes the Host header on unchanged (Caddy's default). */
async function hostKeepingProxy(target: string): Promise<{ url: string; stop(): Promise<void> }> {
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.writeHead(502).end());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
