import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { ClusterSettings, ErrorBody, JoinedNodeRole, JoinTokenView } from '@tally/contracts';
import { toolPath } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from './api-harness.js';

const run = promisify(execFile);

/**
 * The bundled object store as install.sh --object-store runs it (versitygw with accounts, the bucket
 * owned by `tally-origin`, the key broker holding the root key): each joined worker/gpu node gets an
 * account of its own (docs/adr/0045), which works for staging, nothing else, and stops working when
 * the node is removed.
 */
describe('object store keys per node', () => {
  let sut: ApiHarness;
  const clients: S3Client[] = [];

  beforeAll(async () => {
    sut = await startApiHarness({ TALLY_CLUSTER_REDIS_URL: 'redis://10.9.0.1:6379' }, { objectStore: 'nodeKeys' });
  });

  afterAll(async () => {
    for (const c of clients) c.destroy();
    await sut?.stop();
  });

  const store = () => sut.stack.objectStore!;
  const name = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;
  const joined = async (role: JoinedNodeRole, nodeName: string): Promise<ClusterSettings> => {
    const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { role, name: nodeName });
    expect(created.status).toBe(201);
    const answer = await sut.anonymous.post<ClusterSettings & ErrorBody>('/v1/nodes/join', {
      token: created.body.token,
      role,
      name: nodeName,
    });
    expect(answer.status).toBe(200);
    return answer.body;
  };
  /** A real S3 client holding what the node was handed, on the store (the test's address for it). */
  const clientOf = (settings: ClusterSettings) => {
    const os = settings.objectStore!;
    const client = new S3Client({
      region: os.region,
      endpoint: store().endpoint,
      forcePathStyle: os.forcePathStyle,
      credentials: { accessKeyId: os.accessKeyId, secretAccessKey: os.secretAccessKey },
      maxAttempts: 1,
    });
    clients.push(client);
    return client;
  };
  const stage = (client: S3Client, key: string, body: string) =>
    client.send(new PutObjectCommand({ Bucket: store().bucket, Key: key, Body: body }));
  /** The store's refusal: its HTTP status and S3 error code. */
  const refusal = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(S3ServiceException);
    const e = error as S3ServiceException;
    return { status: e.$metadata.httpStatusCode, code: e.name };
  };
  const admin = (access: string, secret: string) =>
    run(toolPath('versitygw'), ['admin', '--endpoint-url', store().adminUrl!, 'list-users'], {
      env: { ...process.env, ADMIN_ACCESS_KEY: access, ADMIN_SECRET_KEY: secret },
    });

  it('hands each worker/gpu node a key of its own, never the origin key, and none to media nodes', async () => {
    const a = await joined('worker', name('keys-a'));
    const b = await joined('gpu', name('keys-b'));
    const media = await joined('media', name('keys-m'));
    expect(a.objectStore?.accessKeyId).toBe(`tally-node-${a.nodeId}`);
    expect(b.objectStore?.accessKeyId).toBe(`tally-node-${b.nodeId}`);
    expect(a.objectStore?.secretAccessKey).not.toBe(b.objectStore?.secretAccessKey);
    expect(a.objectStore?.accessKeyId).not.toBe(store().env['TALLY_S3_ACCESS_KEY']);
    expect(a.objectStore?.bucket).toBe(store().bucket);
    expect(media.objectStore).toBeNull();
  });

  it('a node key stages under incoming/ and reads back what it staged; the origin key still does everything', async () => {
    const node = await joined('worker', name('keys-stage'));
    const client = clientOf(node);
    const key = `incoming/app-x/${randomBytes(4).toString('hex')}.mkv`;
    await stage(client, key, 'staged bytes');
    const head = await client.send(new HeadObjectCommand({ Bucket: store().bucket, Key: key }));
    expect(head.ContentLength).toBe('staged bytes'.length);
    // The origin's services (the bucket's owner) read it, as the worker does when it finalises.
    const origin = new S3Client({
      region: store().region,
      endpoint: store().endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: store().env['TALLY_S3_ACCESS_KEY']!, secretAccessKey: store().env['TALLY_S3_SECRET_KEY']! },
    });
    clients.push(origin);
    const got = await origin.send(new GetObjectCommand({ Bucket: store().bucket, Key: key }));
    expect(await got.Body?.transformToString()).toBe('staged bytes');
    await origin.send(new PutObjectCommand({ Bucket: store().bucket, Key: 'app-x/recording.mp4', Body: 'final' }));
  });

  it('a node key cannot touch recordings, list the bucket, create buckets or reach the admin API', async () => {
    const node = await joined('worker', name('keys-deny'));
    const client = clientOf(node);
    await store().client.send(new PutObjectCommand({ Bucket: store().bucket, Key: 'app-y/rec.mp4', Body: 'a recording' }));
    expect(await refusal(client.send(new GetObjectCommand({ Bucket: store().bucket, Key: 'app-y/rec.mp4' })))).toEqual({
      status: 403,
      code: 'AccessDenied',
    });
    expect(await refusal(stage(client, 'app-y/rec.mp4', 'overwritten'))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await refusal(client.send(new ListObjectsV2Command({ Bucket: store().bucket })))).toEqual({
      status: 403,
      code: 'AccessDenied',
    });
    expect(await refusal(client.send(new CreateBucketCommand({ Bucket: `other-${randomBytes(3).toString('hex')}` })))).toEqual({
      status: 403,
      code: 'AccessDenied',
    });
    const os = node.objectStore!;
    const refused = await admin(os.accessKeyId, os.secretAccessKey).then(
      () => undefined,
      (e: { stderr?: string; message?: string }) => `${e.stderr ?? ''} ${e.message ?? ''}`,
    );
    expect(refused).toMatch(/access denied|AccessDenied|403/i);
    // The recording is untouched.
    const kept = await store().client.send(new GetObjectCommand({ Bucket: store().bucket, Key: 'app-y/rec.mp4' }));
    expect(await kept.Body?.transformToString()).toBe('a recording');
  });

  it('removing a node deletes its key at once: the store refuses it, another node keeps working', async () => {
    const gone = await joined('worker', name('keys-gone'));
    const stays = await joined('worker', name('keys-stays'));
    const goneClient = clientOf(gone);
    const staysClient = clientOf(stays);
    await stage(goneClient, `incoming/app-z/${randomBytes(4).toString('hex')}.mkv`, 'before');

    expect((await sut.admin.delete(`/v1/nodes/${gone.nodeId}`)).status).toBe(204);

    expect(await refusal(stage(goneClient, `incoming/app-z/${randomBytes(4).toString('hex')}.mkv`, 'after'))).toEqual({
      status: 403,
      code: 'InvalidAccessKeyId',
    });
    await stage(staysClient, `incoming/app-z/${randomBytes(4).toString('hex')}.mkv`, 'still works');
    // Removed again: 404, and the other node's key still works.
    expect((await sut.admin.delete(`/v1/nodes/${gone.nodeId}`)).status).toBe(404);
    await stage(staysClient, `incoming/app-z/${randomBytes(4).toString('hex')}.mkv`, 'still works');
  });

  it('a node re-joined under the same name gets a new key; the old one is refused', async () => {
    const nodeName = name('keys-rejoin');
    const first = await joined('worker', nodeName);
    expect((await sut.admin.delete(`/v1/nodes/${nodeName}`)).status).toBe(204);
    const second = await joined('worker', nodeName);
    expect(second.objectStore?.secretAccessKey).not.toBe(first.objectStore?.secretAccessKey);
    await stage(clientOf(second), `incoming/app-r/${randomBytes(4).toString('hex')}.mkv`, 'new key');
    expect(await refusal(stage(clientOf(first), `incoming/app-r/${randomBytes(4).toString('hex')}.mkv`, 'old key'))).toMatchObject({
      status: 403,
    });
  });
});
