import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { type Child, startChild } from './child.js';
import { freePort, waitFor } from './ports.js';
import { toolPath } from './tools.js';

export type TestObjectStore = Readonly<{
  /** http://127.0.0.1:PORT, path-style. */
  endpoint: string;
  bucket: string;
  region: string;
  accessKey: string;
  secretKey: string;
  /** TALLY_S3_* for a Tally process. */
  env: Readonly<Record<string, string>>;
  /** A real S3 client on the store, for tests to look into the bucket as a user would. */
  client: S3Client;
  /** Every object in the bucket: key and size. */
  list(): Promise<{ key: string; size: number }[]>;
  /** Stops the server (its data stays); `start()` brings it back on the same port with the same data. */
  pause(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}>;

/** A real S3 server (versitygw, scripts/provision/object-store.sh) on a free loopback port, with one bucket. */
export async function startObjectStore(): Promise<TestObjectStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-s3-'));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const accessKey = `tally${randomBytes(6).toString('hex')}`;
  const secretKey = randomBytes(24).toString('hex');
  const region = 'us-east-1';
  const bucket = 'tally-recordings';
  const client = new S3Client({
    region,
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: accessKey, secretAccessKey: secretKey },
  });
  let child: Child | undefined;

  const start = async (): Promise<void> => {
    child = startChild(toolPath('versitygw'), ['--port', `127.0.0.1:${port}`, '--quiet', 'posix', dataDir], join(dir, 'versitygw.log'), {
      ...process.env,
      ROOT_ACCESS_KEY: accessKey,
      ROOT_SECRET_KEY: secretKey,
    });
    await waitFor('versitygw', async () => {
      const response = await fetch(`${endpoint}/`).catch(() => undefined);
      return response ? true : undefined;
    });
  };
  await start();
  await client.send(new CreateBucketCommand({ Bucket: bucket }));

  return {
    endpoint,
    bucket,
    region,
    accessKey,
    secretKey,
    env: {
      TALLY_S3_BUCKET: bucket,
      TALLY_S3_ENDPOINT: endpoint,
      TALLY_S3_REGION: region,
      TALLY_S3_ACCESS_KEY: accessKey,
      TALLY_S3_SECRET_KEY: secretKey,
      TALLY_S3_FORCE_PATH_STYLE: 'true',
    },
    client,
    async list() {
      const out: { key: string; size: number }[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        for (const o of page.Contents ?? []) out.push({ key: o.Key ?? '', size: Number(o.Size ?? 0) });
        token = page.NextContinuationToken;
      } while (token);
      return out;
    },
    async pause() {
      await child?.stop();
      child = undefined;
    },
    start,
    async stop() {
      await child?.stop();
      client.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
