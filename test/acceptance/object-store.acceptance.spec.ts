import { statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { dispose, TrackKind } from '@livekit/rtc-node';
import type { AppView, RecordingView } from '@tally/contracts';
import { waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import {
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

const RECORD_MS = 6_000;

/**
 * The node scripts/acceptance.sh installed again with `./install.sh --object-store`: every mode
 * records into the bucket on this host, seen with a real S3 client holding the key install.sh wrote.
 */
describe('an installed node with --object-store: recordings in the bucket on this host', () => {
  let node: Installed;
  let tenant: Tenant;
  let s3: S3Client;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    node = installed();
    tenant = await createTenant(node.admin, 'acceptance object store');
    s3 = new S3Client({
      region: node.env['TALLY_S3_REGION'] ?? 'us-east-1',
      endpoint: node.env['TALLY_S3_ENDPOINT'],
      forcePathStyle: true,
      credentials: { accessKeyId: node.env['TALLY_S3_ACCESS_KEY'] ?? '', secretAccessKey: node.env['TALLY_S3_SECRET_KEY'] ?? '' },
    });
  });

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    if (tenant) await node.admin.delete(`/v1/apps/${tenant.app.id}`);
    s3?.destroy();
    await dispose();
  });

  async function objects(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: node.env['TALLY_S3_BUCKET'], ContinuationToken: token }));
      for (const o of page.Contents ?? []) out.set(o.Key ?? '', Number(o.Size ?? 0));
      token = page.NextContinuationToken;
    } while (token);
    return out;
  }

  it('stores the bucket on this host with a key scoped to it: the root key is readable by root and the store only, and the key in tally.env cannot make buckets', async () => {
    expect(node.env).toMatchObject({
      TALLY_OBJECT_STORE: 'bundled',
      TALLY_S3_BUCKET: 'tally-recordings',
      TALLY_S3_ACCESS_KEY: 'tally-origin',
    });
    expect(node.env['TALLY_S3_ENDPOINT']).toBe(`http://${node.nodeIp}:${node.env['TALLY_OBJECT_STORE_PORT']}`);
    const rootKey = statSync(join(node.home, 'object-store.env'));
    expect(rootKey.uid).toBe(0);
    expect(rootKey.mode & 0o777).toBe(0o640);
    expect(statSync(join(node.home, 'object-store')).mode & 0o777).toBe(0o700);
    await expect(s3.send(new CreateBucketCommand({ Bucket: 'not-tallys' }))).rejects.toMatchObject({ name: 'AccessDenied' });
  });

  /** Publishes, records with `mode` (auto when undefined) for RECORD_MS, stops; answers the recording once it is in the bucket. */
  async function recordIntoBucket(name: string, options: { mode?: string; video?: boolean; publishers?: number; on?: Tenant }) {
    const app = options.on ?? tenant;
    const stream = await createStream(app, name);
    const count = options.publishers ?? 1;
    const mine: Publisher[] = [];
    for (let i = 0; i < count; i++) {
      const token = await streamToken(app, stream.id, 'publisher', `speaker-${i}`);
      mine.push(await joinAndPublish(token.url, token.token, { video: options.video ?? true }));
      publishers.push(mine.at(-1)!);
    }
    await streamLive(app, stream.id, count);
    if (count === 1) await tracksUp(app.client, app.app.id, stream.id, options.video === false ? [TrackKind.KIND_AUDIO] : undefined);
    const started = await waitFor(
      'the recording to be accepted (LiveKit lists the tracks a moment after the join)',
      async () => {
        const r = await app.client.post<RecordingView>(
          `/v1/apps/${app.app.id}/streams/${stream.id}/recordings`,
          options.mode ? { mode: options.mode } : {},
        );
        return r.status === 409 ? undefined : r;
      },
      20_000,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const path = `/v1/apps/${app.app.id}/recordings/${started.body.id}`;
    await waitFor(
      'the recording to be active',
      async () => ((await app.client.get<RecordingView>(path)).body.status === 'active' ? true : undefined),
      90_000,
    );
    await new Promise((r) => setTimeout(r, RECORD_MS));
    expect((await app.client.post(`${path}/stop`)).status).toBeLessThan(300);
    await Promise.all(mine.map((p) => p.stop()));
    publishers.splice(0, publishers.length, ...publishers.filter((p) => !mine.includes(p)));
    const done = await waitFor(
      'the recording in the bucket',
      async () => {
        const r = (await app.client.get<RecordingView>(path)).body;
        return r.status === 'failed' || r.storage === 's3' ? r : undefined;
      },
      180_000,
    );
    expect(done).toMatchObject({ status: 'complete', storage: 's3', error: null, uploadError: null });
    return { started: started.body, done, path, app };
  }

  /** The object is listed with the recording's size; the file route's 302 leads to it; the download probes and decodes. */
  async function downloadedFromBucket(done: RecordingView, path: string, app: Tenant) {
    expect((await objects()).get(done.location)).toBe(done.sizeBytes);
    const redirect = await app.client.raw(`${path}/file`);
    expect(redirect.status).toBe(302);
    const url = redirect.headers.get('location') ?? '';
    expect(url.startsWith(`${node.env['TALLY_S3_ENDPOINT']}/tally-recordings/${done.location}?`)).toBe(true);
    // A plain client without Tally's key: the signed URL is all it needs.
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const file = join(tmpdir(), `acceptance-s3-${done.id}.${done.location.split('.').pop() ?? 'bin'}`);
    writeFileSync(file, Buffer.from(await response.arrayBuffer()));
    expect(statSync(file).size).toBe(done.sizeBytes);
    const media = await probe(file);
    expect(Math.abs(media.durationS - (done.durationS ?? 0))).toBeLessThan(1);
    await decodes(file);
    return media;
  }

  it('records a camera as sent (auto: passthrough) into the bucket; the download redirects to a signed URL and plays', async () => {
    const { started, done, path, app } = await recordIntoBucket('s3 passthrough', {});
    expect(started.mode).toBe('passthrough');
    expect((await downloadedFromBucket(done, path, app)).streams).toEqual(['audio', 'video']);
  });

  it('records a microphone (auto: track) into the bucket; the download plays', async () => {
    const { started, done, path, app } = await recordIntoBucket('s3 track', { video: false });
    expect(started.mode).toBe('track');
    expect((await downloadedFromBucket(done, path, app)).streams).toEqual(['audio']);
  });

  it('records a VP8 camera for an app that wants MP4 (auto: track-composite) into the bucket; the download plays', async () => {
    const mp4 = await createTenant(node.admin, 'acceptance object store mp4');
    try {
      expect((await mp4.client.patch<AppView>(`/v1/apps/${mp4.app.id}`, { recordingFormat: 'mp4' })).status).toBe(200);
      const { started, done, path, app } = await recordIntoBucket('s3 track composite', { on: mp4 });
      expect(started.mode).toBe('track_composite');
      expect(done.location.endsWith('.mp4')).toBe(true);
      expect((await downloadedFromBucket(done, path, app)).streams).toEqual(['audio', 'video']);
    } finally {
      await node.admin.delete(`/v1/apps/${mp4.app.id}`);
    }
  });

  it('records two publishers composed in Chromium (auto: room-composite) into the bucket; the download plays', async () => {
    const { started, done, path, app } = await recordIntoBucket('s3 room composite', { publishers: 2 });
    expect(started.mode).toBe('room_composite');
    expect((await downloadedFromBucket(done, path, app)).streams).toEqual(['audio', 'video']);
  });
});
