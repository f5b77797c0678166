import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startObjectStore, type TestObjectStore } from './object-store.js';

describe('the object store in the test stack', () => {
  let store: TestObjectStore;

  beforeAll(async () => {
    store = await startObjectStore();
  });

  afterAll(async () => {
    await store?.stop();
  });

  it('keeps what was put into its bucket across a stop and a start, and refuses requests while stopped', async () => {
    const body = Buffer.from('a recording, byte for byte');
    await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: 'app/rec.mp4', Body: body }));
    expect(await store.list()).toEqual([{ key: 'app/rec.mp4', size: body.length }]);

    await store.pause();
    await expect(store.list()).rejects.toThrow();
    await store.start();

    const got = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: 'app/rec.mp4' }));
    expect(Buffer.from(await got.Body!.transformToByteArray())).toEqual(body);
  });
});
