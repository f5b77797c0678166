/**
 * The client side of scripts/install-failover.int.sh: through the installed origin's API, as an app
 * would, it creates an app whose webhook endpoint (a signed receiver in this process) answers 503, a
 * stream that a publisher joins and that is then ended, and a stream a real publisher
 * (@livekit/rtc-node) sends video and audio to with a passthrough recording of it. Once the
 * recording is active and four deliveries wait in the backlog it writes STATE_DIR/app.json (the
 * app's id and key) and STATE_DIR/active, and keeps publishing while the test kills the Redis
 * primary. Meanwhile it also holds what the API host phase needs: an app whose endpoint (a second
 * receiver) answers 200, and an app whose stream quota is 1 (their ids and keys in app.json); when
 * STATE_DIR/hooked appears (a stream id of that app, made and ended while the host was gone) it waits
 * for that stream's event, then for every delivery of the app, and writes STATE_DIR/hooked.json: each
 * event reached the endpoint exactly once with a valid signature, or what went wrong.
 * When STATE_DIR/go appears it checks the stream is still live with its publisher and the
 * recording still active, lets the endpoint answer 200, stops the recording, waits for it to
 * complete, downloads and probes it (ffprobe: audio and video, the longest gap between video
 * packets), waits until every delivery is delivered and checks each event reached the endpoint
 * exactly once with a valid signature, and runs a reconciliation sweep whose reservation audit must
 * free nothing. Prints one JSON line with what it saw; exit 0 = all good.
 *
 * Usage: node --import @swc-node/register/esm-register scripts/install-failover/media-workload.ts BASE_URL ADMIN_KEY_FILE STATE_DIR
 * Environment: TALLY_FAILOVER_RECEIVER_HOST (the receivers' address, one every API host's worker
 * reaches; default loopback), TALLY_FAILOVER_LIVEKIT_URL (the publisher's signal URL instead of the
 * token's, e.g. the origin's livekit-server when the token names a domain this process cannot trust).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JOBS } from '@tally/contracts';
import { Queue } from 'bullmq';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { SignedReceiver } from '../../apps/api/test/signed-receiver.js';
import { apiCaller, GaveUp, type Json, recordBothTracks, waitFor } from '../install-hosts/api-call.js';

const run = promisify(execFile);
const [base, adminKeyFile, stateDir] = process.argv.slice(2) as [string, string, string];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
const expectStatus = apiCaller(base);
const log = (line: string) => console.log(`[media-workload] ${line}`);

const receiverHost = process.env['TALLY_FAILOVER_RECEIVER_HOST'] ?? '127.0.0.1';

/** An app with a key, and with a signed receiver as its webhook endpoint when one is given. */
async function newApp(name: string, endpoint?: SignedReceiver): Promise<{ appId: string; key: string }> {
  const made = await expectStatus(adminKey, 'POST', '/v1/apps', 201, { name });
  const id = String(made.id);
  const appKey = String((await expectStatus(adminKey, 'POST', `/v1/apps/${id}/keys`, 201)).key);
  if (endpoint) {
    await expectStatus(appKey, 'PATCH', `/v1/apps/${id}`, 200, { webhookUrl: endpoint.url });
    endpoint.secret = String((await expectStatus(appKey, 'POST', `/v1/apps/${id}/webhook-secret`, 201, {})).secret);
  }
  return { appId: id, key: appKey };
}

const receiver = await SignedReceiver.start(receiverHost);
receiver.refusing = true;
const { appId, key } = await newApp('redis-failover-media', receiver);
const hostReceiver = await SignedReceiver.start(receiverHost);
const hostApp = await newApp('api-host-gone', hostReceiver);
// Room for the streams the API host phase starts and ends every 0.3 s, some still open while others start.
await expectStatus(adminKey, 'PATCH', `/v1/apps/${hostApp.appId}`, 200, { quotas: { maxStreams: 50 } });
const quotaApp = await newApp('api-host-gone-quota');
await expectStatus(adminKey, 'PATCH', `/v1/apps/${quotaApp.appId}`, 200, { quotas: { maxStreams: 1 } });

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
  const publisher = await joinAndPublish(process.env['TALLY_FAILOVER_LIVEKIT_URL'] ?? String(token.url), String(token.token), { video });
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
const deliveriesOf = async (id: string, appKey: string) =>
  (await expectStatus(appKey, 'GET', `/v1/apps/${id}/webhook-deliveries?limit=500`, 200)).items as Delivery[];
const deliveries = () => deliveriesOf(appId, key);

/** The API host phase's webhook: STATE_DIR/hooked names a stream of the host app; the verdict goes to STATE_DIR/hooked.json. */
async function hostPhaseWebhook(): Promise<void> {
  const streamId = readFileSync(join(stateDir, 'hooked'), 'utf8').trim();
  const problems: string[] = [];
  try {
    await waitFor(`the webhook of stream ${streamId}`, 200_000, () =>
      Promise.resolve(hostReceiver.events.some((e) => JSON.stringify(e.body.data).includes(streamId)) ? true : undefined),
    );
    const delivered = await waitFor('every delivery of the host app delivered', 200_000, async () => {
      const items = await deliveriesOf(hostApp.appId, hostApp.key);
      return items.every((d) => d.status === 'delivered') ? items : undefined;
    });
    // Delivery is at least once (Standard Webhooks): a worker frozen while it held a delivery sends
    // it when it runs again, after the other worker took the lapsed claim over; both carry the
    // event's webhook-id, by which a receiver drops the second.
    const missing = delivered.filter((d) => (hostReceiver.accepted.get(d.eventId) ?? 0) < 1);
    if (missing.length > 0)
      problems.push(
        `not delivered: ${missing.map((d) => d.eventId).join(',')} (accepted: ${JSON.stringify(Object.fromEntries(hostReceiver.accepted))})`,
      );
    const duplicates = delivered.filter((d) => (hostReceiver.accepted.get(d.eventId) ?? 0) > 1).length;
    if (!hostReceiver.events.every((e) => e.signatureValid)) problems.push('a webhook arrived with a bad signature');
    writeFileSync(
      join(stateDir, 'hooked.json'),
      JSON.stringify({
        problems,
        delivered: delivered.length,
        duplicates,
        requests: hostReceiver.deliveries,
        events: [...new Set(delivered.map((d) => d.eventType))].sort(),
      }),
    );
  } catch (error) {
    writeFileSync(join(stateDir, 'hooked.json'), JSON.stringify({ problems: [...problems, String(error)] }));
  }
}

const brief = await publishTo('brief', false);
await brief.publisher.stop();
await expectStatus(key, 'DELETE', brief.path, 200);

const onAir = await publishTo('on air', true);
try {
  await tracksUp(client, appId, onAir.id);
  const started = await recordBothTracks(expectStatus, key, onAir.path, log);
  // auto picks passthrough for one publisher's VP8 and Opus.
  if (started.mode !== 'passthrough')
    throw new Error(`the recording's mode is ${String(started.mode)}, not passthrough (${String(started.reason)})`);
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
  writeFileSync(
    join(stateDir, 'app.json'),
    JSON.stringify({
      appId,
      key,
      room: `${appId}.${onAir.id}`,
      streamId: onAir.id,
      hostAppId: hostApp.appId,
      hostKey: hostApp.key,
      quotaAppId: quotaApp.appId,
      quotaKey: quotaApp.key,
    }),
  );
  writeFileSync(join(stateDir, 'active'), `${recordingPath}\n`);
  log(`recording active, ${pendingAtKill} webhook deliveries pending; waiting for STATE_DIR/go`);

  let hostPhase: Promise<void> | undefined;
  await waitFor('the failover to be measured (STATE_DIR/go)', 900_000, () => {
    if (hostPhase === undefined && existsSync(join(stateDir, 'hooked'))) hostPhase = hostPhaseWebhook();
    return Promise.resolve(existsSync(join(stateDir, 'go')) ? true : undefined);
  });
  await hostPhase;
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
  // The API host phase's app: nothing arrived a second time once the frozen host thawed.
  const againAfterThaw = [...hostReceiver.accepted].filter(([, n]) => n !== 1);
  if (againAfterThaw.length > 0) problems.push(`the API host phase's webhooks arrived more than once: ${JSON.stringify(againAfterThaw)}`);
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
  await hostReceiver.stop();
}
process.exit(0);
