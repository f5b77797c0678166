import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { type Child, startChild } from './child.js';
import { freePort, waitFor } from './ports.js';
import { toolPath } from './tools.js';

const KEY_BROKER = join(import.meta.dirname, '..', '..', '..', 'scripts', 'install', 'object-store-keys.mjs');

export type TestObjectStore = Readonly<{
  /** http://127.0.0.1:PORT, path-style. */
  endpoint: string;
  bucket: string;
  region: string;
  accessKey: string;
  secretKey: string;
  /** TALLY_S3_* for a Tally process. */
  env: Readonly<Record<string, string>>;
  /** A real S3 client on the store with its root key, for tests to look into the bucket as a user would. */
  client: S3Client;
  /**
   * With `nodeKeys`: the store's admin API (versitygw's, root key only) and the key broker's socket
   * (scripts/install/object-store-keys.mjs, as install.sh --object-store runs them); `env` then
   * holds the key of the bucket's owner account, as tally.env does, and TALLY_OBJECT_STORE_KEYS_SOCKET.
   */
  adminUrl?: string;
  keysSocket?: string;
  /** Every object in the bucket: key and size. */
  list(): Promise<{ key: string; size: number }[]>;
  /** Stops the server (its data stays); `start()` brings it back on the same port with the same data. */
  pause(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}>;

export type ObjectStoreOptions = Readonly<{
  /**
   * Run it as install.sh --object-store does: accounts (versitygw's IAM directory and admin API), the
   * bucket owned by the account `tally-origin` Tally's services use, and the key broker that gives
   * each joined node an account of its own (docs/adr/0045).
   */
  nodeKeys?: boolean;
}>;

/** A real S3 server (versitygw, scripts/provision/object-store.sh) on a free loopback port, with one bucket. */
export async function startObjectStore(options: ObjectStoreOptions = {}): Promise<TestObjectStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-s3-'));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  const iamDir = join(dir, 'iam');
  mkdirSync(iamDir);
  const port = await freePort();
  const adminPort = options.nodeKeys ? await freePort() : undefined;
  const adminUrl = adminPort === undefined ? undefined : `http://127.0.0.1:${adminPort}`;
  const keysSocket = options.nodeKeys ? join(dir, 'keys.sock') : undefined;
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
  let broker: Child | undefined;
  const accounts = adminUrl === undefined ? [] : ['--admin-port', `127.0.0.1:${adminPort}`, '--iam-dir', iamDir];

  const start = async (): Promise<void> => {
    child = startChild(
      toolPath('versitygw'),
      ['--port', `127.0.0.1:${port}`, ...accounts, '--quiet', 'posix', dataDir],
      join(dir, 'versitygw.log'),
      { ...process.env, ROOT_ACCESS_KEY: accessKey, ROOT_SECRET_KEY: secretKey },
    );
    await waitFor('versitygw', async () => {
      const response = await fetch(`${endpoint}/`).catch(() => undefined);
      return response ? true : undefined;
    });
  };
  await start();
  // The key Tally's services hold: the root key, or the bucket owner's (install.sh's `tally-origin`).
  const owner = { accessKey, secretKey };
  if (adminUrl !== undefined && keysSocket !== undefined) {
    const admin = (...args: string[]) =>
      new Promise<void>((resolve, reject) =>
        execFile(
          toolPath('versitygw'),
          ['admin', '--endpoint-url', adminUrl, ...args],
          { env: { ...process.env, ADMIN_ACCESS_KEY: accessKey, ADMIN_SECRET_KEY: secretKey } },
          (error) => (error ? reject(new Error(`versitygw admin ${args[0]}: ${error.message}`)) : resolve()),
        ),
      );
    owner.accessKey = 'tally-origin';
    owner.secretKey = randomBytes(24).toString('hex');
    await waitFor('versitygw admin API', () =>
      admin('list-users').then(
        () => true,
        () => undefined,
      ),
    );
    await admin('create-user', '--access', owner.accessKey, '--secret', owner.secretKey, '--role', 'user');
    await admin('create-bucket', '--bucket', bucket, '--owner', owner.accessKey);
    broker = startChild(process.execPath, [KEY_BROKER], join(dir, 'object-store-keys.log'), {
      ...process.env,
      NODE_NO_WARNINGS: '1',
      ROOT_ACCESS_KEY: accessKey,
      ROOT_SECRET_KEY: secretKey,
      TALLY_OBJECT_STORE_KEYS_SOCKET: keysSocket,
      TALLY_OBJECT_STORE_URL: endpoint,
      TALLY_OBJECT_STORE_ADMIN_URL: adminUrl,
      TALLY_OBJECT_STORE_BIN: toolPath('versitygw'),
      TALLY_S3_BUCKET: bucket,
      TALLY_OBJECT_STORE_OWNER: owner.accessKey,
    });
    await waitFor('the object store key broker', async () => {
      const answer = await nodeList(keysSocket).catch(() => undefined);
      return answer === 200 ? true : undefined;
    });
  } else {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  }

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
      TALLY_S3_ACCESS_KEY: owner.accessKey,
      TALLY_S3_SECRET_KEY: owner.secretKey,
      TALLY_S3_FORCE_PATH_STYLE: 'true',
      ...(keysSocket === undefined ? {} : { TALLY_OBJECT_STORE_KEYS_SOCKET: keysSocket }),
    },
    client,
    ...(adminUrl === undefined ? {} : { adminUrl }),
    ...(keysSocket === undefined ? {} : { keysSocket }),
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
      await broker?.stop();
      await child?.stop();
      client.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** GET /nodes on the key broker's socket: its HTTP status. */
function nodeList(socketPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/nodes' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
