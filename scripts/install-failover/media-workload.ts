/**
 * The client side of scripts/install-failover.int.sh: through the installed origin's API, as an app
 * would, it creates an app whose webhook endpoint (a signed receiver in this process) answers 503, a
 * stream that a publisher joins and that is then ended, and a stream a real publisher
 * (@livekit/rtc-node) sends video and audio to with a passthrough recording of it. Once the
 * recording is active and four deliveries wait in the backlog it writes STATE_DIR/app.json (the
 * app's id and key) and STATE_DIR/active, and keeps publishing while the test kills the Redis
 * primary. When STATE_DIR/go appears it checks the stream is still live with its publisher and the
 * recording still active, lets the endpoint answer 200, stops the recording, waits for it to
 * complete, downloads and probes it (ffprobe: audio and video, the longest gap between video
 * packets), waits until every delivery is delivered and checks each event reached the endpoint
 * exactly once with a valid signature, and runs a reconciliation sweep whose reservation audit must
 * free nothing. Prints one JSON line with what it saw; exit 0 = all good.
 *
 * Usage: node --import @swc-node/register/esm-register scripts/install-failover/media-workload.ts BASE_URL ADMIN_KEY_FILE STATE_DIR
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JOBS } from '@tally/contracts';
import { Queue } from 'bullmq';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { SignedReceiver } from '../../apps/api/test/signed-receiver.js';
import { apiCaller, GaveUp, type Json, waitFor } from '../install-hosts/api-call.js';

const run = promisify(execFile);
const [base, adminKeyFile, stateDir] = process.argv.slice(2) as [string, string, string];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
const expectStatus = apiCaller(base);
const log = (line: string) => console.log(`[media-workload] ${line}`);

const receiver = await SignedReceiver.start();
receiver.refusing = true;
const app = await expectStatus(adminKey, 'POST', '/v1/apps', 201, { name: 'redis-failover-media' });
const appId = String(app.id);
const key = String((await expectStatus(adminKey, 'POST', `/v1/apps/${appId}/keys`, 201)).key);
await expectStatus(key, 'PATCH', `/v1/apps/${appId}`, 200, { webhookUrl: receiver.url });
receiver.secret = String((await expectStatus(key, 'POST', `/v1/apps/${appId}/webhook-secret`, 201, {})).secret);

/** What tracksUp needs of an API client. */
const client = {
  post: async (path: string, body: Json) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json(), headers: response.headers };
  },
} as unknown as Parameters<typeof tracksUp>[0];

async function publishTo(name: string, video: boolean): Promise<{ path: string; publisher: Publisher; id: string }> {
  const stream = await expectStatus(key, 'POST', `/v1/apps/${appId}/streams`, 201, { name });
  const path = `/v1/apps/${appId}/streams/${String(stream.id)}`;
  const token = await expectStatus(key, 'POST', `${path}/tokens`, 201, { identity: 'camera', role: 'publisher' });
  const publisher = await joinAndPublish(String(token.url), String(token.token), { video });
  await waitFor(`stream ${name} live`, 60_000, async () => {
    const s = await expectStatus(key, 'GET', path, 200);
    return s.status === 'live' && s.publishers === 1 ? s : undefined;
  });
  return { path, publisher, id: String(stream.id) };
}

/**
 * POST /v1/reconcile, then the worker's sweep job read back from BullMQ through the origin's
 * Sentinels (REDIS_URL and REDIS_SENTINELS of its tally.env, in this process's environment).
 */
async function reconcileAudit(): Promise<Record<string, Record<string, number>>> {
  const { jobId } = (await expectStatus(adminKey, 'POST', '/v1/reconcile', 202)) as { jobId: string };
  const url = new URL(process.env['REDIS_URL'] ?? '');
  const queue = new Queue(JOBS.reconcileStreams.queue, {
    connection: {
      sentinels: (process.env['REDIS_SENTINELS'] ?? '').split(',').map((a) => ({ host: a.split(':')[0]!, port: Number(a.split(':')[1]) })),
      name: process.env['REDIS_SENTINEL_NAME'] ?? 'tally',
      ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
      password: decodeURIComponent(url.password),
      maxRetriesPerRequest: null,
    },
  });
  try {
    const job = await waitFor(`sweep ${jobId} to finish`, 180_000, async () => {
      const found = await queue.getJob(jobId);
      return found?.finishedOn === undefined ? undefined : found;
    });
    if (job.failedReason) throw new Error(`the sweep failed: ${job.failedReason}`);
    return job.returnvalue as Record<string, Record<string, number>>;
  } finally {
    await queue.close();
  }
}

type Delivery = { eventId: string; eventType: string; status: string; attempts: number };
const deliveries = async () => (await expectStatus(key, 'GET', `/v1/apps/${appId}/webhook-deliveries?limit=500`, 200)).items as Delivery[];

const brief = await publishTo('brief', false);
await brief.publisher.stop();
await expectStatus(key, 'DELETE', brief.path, 200);

const onAir = await publishTo('on air', true);
try {
  await tracksUp(client, appId, onAir.id);
  const started = await expectStatus(key, 'POST', `${onAir.path}/recordings`, 201, { mode: 'passthrough' });
  const recordingPath = `/v1/apps/${appId}/recordings/${String(started.id)}`;
  await waitFor('the recording to be active', 120_000, async () => {
    const r = await expectStatus(key, 'GET', recordingPath, 200);
    if (r.status === 'failed') throw new GaveUp(`the recording failed: ${JSON.stringify(r)}`);
    return r.status === 'active' ? true : undefined;
  });
  const pendingAtKill = await waitFor('a backlog of four deliveries', 60_000, async () => {
    const pending = (await deliveries()).filter((d) => d.status === 'pending' && d.attempts > 0);
    return pending.length >= 4 ? pending.length : undefined;
  });
  writeFileSync(join(stateDir, 'app.json'), JSON.stringify({ appId, key, room: `${appId}.${onAir.id}` }));
  writeFileSync(join(stateDir, 'active'), `${recordingPath}\n`);
  log(`recording active, ${pendingAtKill} webhook deliveries pending; waiting for STATE_DIR/go`);

  await waitFor('the failover to be measured (STATE_DIR/go)', 900_000, () =>
    Promise.resolve(existsSync(join(stateDir, 'go')) ? true : undefined),
  );
  // What went wrong is collected, and the rest still checked and measured: one run shows all of it.
  const problems: string[] = [];
  const stream = await expectStatus(key, 'GET', onAir.path, 200);
  if (stream.status !== 'live' || stream.publishers !== 1)
    problems.push(`after the failover the stream is ${String(stream.status)} with ${String(stream.publishers)} publisher(s)`);
  if (!onAir.publisher.room.isConnected)
    problems.push(`the publisher lost its connection (state ${String(onAir.publisher.room.connectionState)})`);
  const during = await expectStatus(key, 'GET', recordingPath, 200);
  if (during.status !== 'active')
    problems.push(
      `after the failover the recording is ${String(during.status)} (${String(during.error)}, ended ${String(during.endedAt)})`,
    );

  // When the primary was killed (STATE_DIR/killed: seconds since the epoch), for the figures.
  const killedAt = Number(readFileSync(join(stateDir, 'killed'), 'utf8')) * 1000;
  const afterKill = () => Number(((Date.now() - killedAt) / 1000).toFixed(1));
  receiver.refusing = false;
  const stopAfterS = afterKill();
  if (during.status === 'active') await expectStatus(key, 'POST', `${recordingPath}/stop`, 200);
  const done = await waitFor('the recording to complete', 180_000, async () => {
    const r = await expectStatus(key, 'GET', recordingPath, 200);
    if (r.status === 'failed') throw new GaveUp(`the recording failed: ${JSON.stringify(r)}`);
    return r.status === 'complete' ? r : undefined;
  });
  const completeAfterS = afterKill();
  const recordedS = (Date.parse(String(done.endedAt)) - Date.parse(String(done.startedAt))) / 1000;
  const file = await fetch(`${base}${recordingPath}/file`, { headers: { authorization: `Bearer ${key}` } });
  if (file.status !== 200) throw new Error(`GET ${recordingPath}/file: ${file.status}`);
  const path = join(stateDir, `recording.${String(done.location).split('.').pop() ?? 'bin'}`);
  writeFileSync(path, Buffer.from(await file.arrayBuffer()));
  const probe = JSON.parse(
    (await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,codec_name', '-of', 'json', path])).stdout,
  ) as { format: { duration?: string }; streams: { codec_type: string; codec_name: string }[] };
  const videoTimes = (
    await run('ffprobe', ['-v', 'error', '-select_streams', 'v', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', path], {
      maxBuffer: 64 * 1024 * 1024,
    })
  ).stdout
    .split('\n')
    .map(Number)
    .filter((t) => Number.isFinite(t) && t > 0)
    .sort((a, b) => a - b);
  let largestVideoGapS = 0;
  for (let i = 1; i < videoTimes.length; i++) largestVideoGapS = Math.max(largestVideoGapS, videoTimes[i]! - videoTimes[i - 1]!);
  const kinds = probe.streams.map((s) => s.codec_type).sort();
  if (!kinds.includes('audio') || !kinds.includes('video')) problems.push(`the recording has ${kinds.join(', ')}, not audio and video`);
  const fileS = Number(probe.format.duration ?? 0);
  // The file spans the failover (started before the kill, stopped after it) without a hole where
  // the primary was gone: media that stopped for the outage would leave a gap as long as the
  // Sentinels' 5 s down-after.
  if (fileS <= stopAfterS) problems.push(`the file lasts ${fileS} s, but the recording was stopped ${stopAfterS} s after the kill`);
  if (largestVideoGapS >= 5) problems.push(`the recording's video has a gap of ${largestVideoGapS.toFixed(2)} s`);

  const delivered = await waitFor('every webhook delivered', 180_000, async () => {
    const items = await deliveries();
    return items.every((d) => d.status === 'delivered') && items.some((d) => d.eventType === 'recording.completed') ? items : undefined;
  });
  const deliveredAfterS = afterKill();
  const twice = delivered.filter((d) => receiver.accepted.get(d.eventId) !== 1);
  if (twice.length > 0 || receiver.accepted.size !== delivered.length)
    problems.push(
      `webhooks not delivered exactly once: ${JSON.stringify(Object.fromEntries(receiver.accepted))} for ${delivered.map((d) => d.eventId).join(',')}`,
    );
  if (!receiver.events.every((e) => e.signatureValid)) problems.push('a webhook arrived with a bad signature');
  const audit = await reconcileAudit();
  const freed = Object.entries(audit['reservations'] ?? {}).filter(([, n]) => n !== 0);
  if (freed.length > 0 || (audit['streams']?.['reservationsFreed'] ?? 0) !== 0)
    problems.push(`the reconcile audit freed reservations: ${JSON.stringify(audit)}`);
  console.log(
    JSON.stringify({
      auditNonZero: Object.fromEntries(
        Object.entries(audit).flatMap(([k, v]) =>
          Object.entries(v)
            .filter(([, n]) => n !== 0)
            .map(([f, n]) => [`${k}.${f}`, n]),
        ),
      ),
      recording: done.status,
      recordedS,
      stopAfterS,
      completeAfterS,
      fileS: Number(fileS.toFixed(1)),
      codecs: probe.streams.map((s) => s.codec_name).sort(),
      largestVideoGapS: Number(largestVideoGapS.toFixed(2)),
      webhooksPendingAtKill: pendingAtKill,
      webhooksDeliveredOnce: delivered.length,
      deliveredAfterS,
      webhookRequests: receiver.deliveries,
      events: [...new Set(delivered.map((d) => d.eventType))].sort(),
    }),
  );
  if (problems.length > 0) throw new Error(problems.join('; '));
} finally {
  await onAir.publisher.stop();
  await receiver.stop();
}
process.exit(0);
