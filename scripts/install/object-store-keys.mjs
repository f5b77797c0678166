// The object store's key broker (docs/adr/0045-object-store-key-per-node.md): the one process
// besides versitygw that holds the bundled store's root key. It makes and deletes the accounts of
// joined nodes, `tally-node-<node>` (role user), and nothing else, on the API's request over a unix
// socket that only the store's user and Tally's services can reach. After each change it rewrites the
// bucket's policy from the accounts that exist: the bucket's owner keeps every right on the bucket;
// each node account may write, read back and abort uploads under `incoming/` only, where nodes stage
// recordings (docs/adr/0033).
//
//   PUT    /nodes/<node>  -> 200 {"accessKeyId","secretAccessKey"}  (a new secret each time)
//   DELETE /nodes/<node>  -> 204                                      (also when there was none)
//   GET    /nodes         -> 200 {"nodes":["<node>", ...]}
//
// Environment: ROOT_ACCESS_KEY, ROOT_SECRET_KEY (DIR/object-store.env), TALLY_OBJECT_STORE_KEYS_SOCKET
// (the socket's path), TALLY_OBJECT_STORE_URL (S3, e.g. http://127.0.0.1:7070),
// TALLY_OBJECT_STORE_ADMIN_URL (versitygw's admin API), TALLY_OBJECT_STORE_BIN (versitygw),
// TALLY_S3_BUCKET, TALLY_OBJECT_STORE_OWNER (the bucket's owner account, e.g. tally-origin).
import console from 'node:console';
import process from 'node:process';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { URL } from 'node:url';
import { promisify } from 'node:util';
import { PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';

const run = promisify(execFile);
const env = process.env;
const need = (name) => {
  const value = env[name];
  if (!value) {
    console.error(`object-store-keys: ${name} is not set`);
    process.exit(2);
  }
  return value;
};
const root = { access: need('ROOT_ACCESS_KEY'), secret: need('ROOT_SECRET_KEY') };
const socket = need('TALLY_OBJECT_STORE_KEYS_SOCKET');
const s3Url = need('TALLY_OBJECT_STORE_URL');
const adminUrl = need('TALLY_OBJECT_STORE_ADMIN_URL');
const bin = need('TALLY_OBJECT_STORE_BIN');
const bucket = need('TALLY_S3_BUCKET');
const owner = need('TALLY_OBJECT_STORE_OWNER');

const PREFIX = 'tally-node-';
// A node id (libs/contracts NodeId); the account name is PREFIX + it.
const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
// What a node's agent does when it stages (apps/agent/src/staging): PUT (multipart above 4 GiB), HEAD.
const NODE_ACTIONS = ['s3:PutObject', 's3:GetObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'];

const s3 = new S3Client({
  region: env.VGW_REGION || 'us-east-1',
  endpoint: s3Url,
  forcePathStyle: true,
  credentials: { accessKeyId: root.access, secretAccessKey: root.secret },
  maxAttempts: 3,
});

/** versitygw's admin CLI, the root key in its environment (not in the process list). */
async function admin(...args) {
  const { stdout } = await run(bin, ['admin', '--endpoint-url', adminUrl, ...args], {
    env: { PATH: env.PATH ?? '/usr/bin:/bin', ADMIN_ACCESS_KEY: root.access, ADMIN_SECRET_KEY: root.secret },
  });
  return stdout;
}

/** The node ids that have an account. */
async function nodeAccounts() {
  return (await admin('list-users'))
    .split('\n')
    .map((line) => line.split(/\s+/)[0] ?? '')
    .filter((name) => name.startsWith(PREFIX))
    .map((name) => name.slice(PREFIX.length));
}

/** The bucket's policy for these node accounts (the owner's statement first, always). */
async function writePolicy(nodes) {
  const statements = [
    {
      Sid: 'owner',
      Effect: 'Allow',
      Principal: { AWS: [owner] },
      Action: ['s3:*'],
      Resource: [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`],
    },
  ];
  if (nodes.length > 0) {
    statements.push({
      Sid: 'nodes-stage',
      Effect: 'Allow',
      Principal: { AWS: nodes.map((node) => PREFIX + node) },
      Action: NODE_ACTIONS,
      Resource: [`arn:aws:s3:::${bucket}/incoming/*`],
    });
  }
  await s3.send(new PutBucketPolicyCommand({ Bucket: bucket, Policy: JSON.stringify({ Version: '2012-10-17', Statement: statements }) }));
}

async function issue(node) {
  const secret = randomBytes(24).toString('hex');
  const existing = await nodeAccounts();
  const verb = existing.includes(node) ? 'update-user' : 'create-user';
  await admin(verb, '--access', PREFIX + node, '--secret', secret, '--role', 'user');
  await writePolicy(await nodeAccounts());
  return { accessKeyId: PREFIX + node, secretAccessKey: secret };
}

async function revoke(node) {
  if ((await nodeAccounts()).includes(node)) await admin('delete-user', '--access', PREFIX + node);
  await writePolicy(await nodeAccounts());
}

// One change at a time: each rewrites the whole policy from the accounts that exist.
let queue = Promise.resolve();
const serial = (fn) => {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
};

const server = createServer((req, res) => {
  const send = (status, body) => {
    res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const url = new URL(req.url ?? '/', 'http://broker');
  const match = /^\/nodes\/([^/]+)$/.exec(url.pathname);
  const node = match ? decodeURIComponent(match[1] ?? '') : undefined;
  let work;
  if (req.method === 'GET' && url.pathname === '/nodes') work = () => nodeAccounts().then((nodes) => [200, { nodes }]);
  else if (node !== undefined && !NODE_ID.test(node)) return send(400, { error: 'node: letters, digits and _ . - only' });
  else if (req.method === 'PUT' && node !== undefined) work = () => issue(node).then((key) => [200, key]);
  else if (req.method === 'DELETE' && node !== undefined) work = () => revoke(node).then(() => [204, undefined]);
  else return send(404, { error: 'PUT or DELETE /nodes/<node>, GET /nodes' });
  req.resume();
  serial(work).then(
    ([status, body]) => send(status, body),
    (error) => {
      console.error(`object-store-keys: ${req.method} ${url.pathname}: ${error?.stderr || error?.message || error}`);
      send(502, { error: `the object store refused: ${String(error?.stderr || error?.message || error).trim()}` });
    },
  );
});

rmSync(socket, { force: true });
server.listen(socket, () => {
  // The socket's directory decides who may connect (install.sh: the store's user and Tally's group only).
  chmodSync(socket, 0o666);
  console.log(`object-store-keys: listening on ${socket} (accounts ${PREFIX}*, bucket ${bucket})`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
