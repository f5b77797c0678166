/**
 * The client side of "a joined worker node records into the origin's store"
 * (scripts/install-hosts.int.sh): through the installed API, as an app would, it publishes real
 * media with @livekit/rtc-node and starts a recording while the origin takes no new work (an
 * operator's PATCH), so admission places it on the node NODE_NAME. It stops the recording after a
 * few seconds and waits until it is complete in object storage; then it lists the bucket with a
 * real S3 client (the origin's TALLY_S3_* from the environment), follows the API's 302 to the signed
 * URL without any Tally key, checks the SHA-256 and probes the file with ffprobe. Prints one JSON
 * line with what it saw; exit 0 = all good.
 *
 * Usage: env TALLY_S3_...=... node --import @swc-node/register/esm-register \
 *   scripts/install-hosts/node-recording-in-store.ts BASE_URL ADMIN_KEY_FILE NODE_NAME STATE_DIR
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { joinAndPublish } from '@tally/testing/media';
import { apiCaller, GaveUp, type Json, waitFor } from './api-call.js';

const run = promisify(execFile);
const [base, adminKeyFile, nodeName, stateDir] = process.argv.slice(2) as [string, string, string, string];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
const expectStatus = apiCaller(base);
const env = process.env;
const bucket = env['TALLY_S3_BUCKET'] ?? '';
const endpoint = env['TALLY_S3_ENDPOINT'] ?? '';

const nodes = (await expectStatus(adminKey, 'GET', '/v1/nodes', 200)).items as Json[];
const origin = nodes.find((n) => n.role === 'origin')?.nodeId;
if (typeof origin !== 'string') throw new Error(`no origin in ${JSON.stringify(nodes)}`);
if (!nodes.some((n) => n.nodeId === nodeName && n.status === 'active'))
  throw new Error(`${nodeName} is not active in ${JSON.stringify(nodes)}`);

const app = await expectStatus(adminKey, 'POST', '/v1/apps', 201, { name: 'node-records-into-the-store' });
const appId = String(app.id);
const key = String((await expectStatus(adminKey, 'POST', `/v1/apps/${appId}/keys`, 201)).key);
const stream = await expectStatus(key, 'POST', `/v1/apps/${appId}/streams`, 201, { name: 'on-the-node' });
const streamPath = `/v1/apps/${appId}/streams/${String(stream.id)}`;
const token = await expectStatus(key, 'POST', `${streamPath}/tokens`, 201, { identity: 'camera', role: 'publisher' });
const publisher = await joinAndPublish(String(token.url), String(token.token));
try {
  await waitFor('the stream to be live', 60_000, async () => {
    const s = await expectStatus(key, 'GET', streamPath, 200);
    return s.status === 'live' && s.publishers === 1 ? s : undefined;
  });
  // The origin takes no new work while the recording starts: admission can only place it on the node.
  await expectStatus(adminKey, 'PATCH', `/v1/nodes/${origin}`, 200, { status: 'disabled' });
  let started: Json;
  try {
    started = await expectStatus(key, 'POST', `${streamPath}/recordings`, 201, {});
  } finally {
    await expectStatus(adminKey, 'PATCH', `/v1/nodes/${origin}`, 200, { status: 'active' });
  }
  const recordingPath = `/v1/apps/${appId}/recordings/${String(started.id)}`;
  // Where admission placed it: the reservation it holds (GET /v1/capacity?detail=reservations).
  const capacity = await expectStatus(adminKey, 'GET', '/v1/capacity?detail=reservations', 200);
  const placedOn = (capacity.reservations as Json[]).find((r) => r.id === started.id)?.nodeId;
  if (placedOn !== nodeName) throw new Error(`the recording was placed on ${String(placedOn)}, not ${nodeName}`);
  await waitFor('the recording to be active', 180_000, async () =>
    (await expectStatus(key, 'GET', recordingPath, 200)).status === 'active' ? true : undefined,
  );
  await new Promise((r) => setTimeout(r, 4_000));
  await expectStatus(key, 'POST', `${recordingPath}/stop`, 200);
  const done = await waitFor('the recording to be complete in the bucket', 300_000, async () => {
    const r = await expectStatus(key, 'GET', recordingPath, 200);
    if (r.status === 'failed') throw new GaveUp(`the recording failed: ${JSON.stringify(r)}`);
    return r.status === 'complete' && r.storage === 's3' ? r : undefined;
  });

  const s3 = new S3Client({
    region: env['TALLY_S3_REGION'] ?? 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: env['TALLY_S3_ACCESS_KEY'] ?? '', secretAccessKey: env['TALLY_S3_SECRET_KEY'] ?? '' },
  });
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  const objects = (listed.Contents ?? []).map((o) => ({ key: o.Key, size: Number(o.Size) }));
  if (!objects.some((o) => o.key === done.location && o.size === done.sizeBytes))
    throw new Error(`${String(done.location)} (${String(done.sizeBytes)} bytes) is not in s3://${bucket}: ${JSON.stringify(objects)}`);
  if (objects.some((o) => o.key?.startsWith(`incoming/${appId}/`))) throw new Error(`staged objects left: ${JSON.stringify(objects)}`);

  const redirect = await fetch(`${base}${recordingPath}/file`, { headers: { authorization: `Bearer ${key}` }, redirect: 'manual' });
  const signed = redirect.headers.get('location') ?? '';
  if (redirect.status !== 302 || !signed.startsWith(`${endpoint}/${bucket}/${String(done.location)}?`))
    throw new Error(`GET ${recordingPath}/file: ${redirect.status} to ${signed}`);
  const file = await fetch(signed);
  if (file.status !== 200) throw new Error(`GET the signed URL: ${file.status}`);
  const bytes = Buffer.from(await file.arrayBuffer());
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== done.sha256) throw new Error(`downloaded sha256 ${sha256}, recorded ${String(done.sha256)}`);
  const path = join(stateDir, `recording.${String(done.location).split('.').pop() ?? 'bin'}`);
  writeFileSync(path, bytes);
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', path]);
  const probe = JSON.parse(stdout) as { format: { duration?: string }; streams: { codec_type: string }[] };
  console.log(
    JSON.stringify({
      nodeId: placedOn,
      mode: done.mode,
      location: done.location,
      sizeBytes: done.sizeBytes,
      durationS: Number(probe.format.duration ?? 0),
      streams: probe.streams.map((s) => s.codec_type),
    }),
  );
  if (!probe.streams.some((s) => s.codec_type === 'video')) throw new Error('the recording has no video stream');
  s3.destroy();
} finally {
  await publisher.stop();
}
process.exit(0);
