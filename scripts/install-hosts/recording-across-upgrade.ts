/**
 * The client side of "an upgrade keeps recordings" (scripts/install-hosts.int.sh): through the
 * installed API, as an app would, it creates an app and a stream, publishes real media with
 * @livekit/rtc-node, starts a recording and writes "active" into STATE_DIR/active. It keeps
 * publishing while the test re-runs install.sh, until STATE_DIR/go appears; then it stops the
 * recording, waits for it to complete, downloads it and checks with ffprobe that it plays and
 * covers the time the upgrade took. Prints one JSON line with what it saw; exit 0 = all good.
 *
 * Usage: node --import @swc-node/register/esm-register scripts/install-hosts/recording-across-upgrade.ts BASE_URL ADMIN_KEY_FILE STATE_DIR
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { joinAndPublish } from '@tally/testing/media';
import { apiCaller, GaveUp, waitFor } from './api-call.js';

const run = promisify(execFile);
const [base, adminKeyFile, stateDir] = process.argv.slice(2) as [string, string, string];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
const expectStatus = apiCaller(base);

const app = await expectStatus(adminKey, 'POST', '/v1/apps', 201, { name: 'upgrade-keeps-recordings' });
const appId = String(app.id);
const key = String((await expectStatus(adminKey, 'POST', `/v1/apps/${appId}/keys`, 201)).key);
const stream = await expectStatus(key, 'POST', `/v1/apps/${appId}/streams`, 201, { name: 'upgrade' });
const streamPath = `/v1/apps/${appId}/streams/${String(stream.id)}`;
const token = await expectStatus(key, 'POST', `${streamPath}/tokens`, 201, { identity: 'camera', role: 'publisher' });
const publisher = await joinAndPublish(String(token.url), String(token.token));
try {
  await waitFor('the stream to be live', 60_000, async () => {
    const s = await expectStatus(key, 'GET', streamPath, 200);
    return s.status === 'live' && s.publishers === 1 ? s : undefined;
  });
  const started = await expectStatus(key, 'POST', `${streamPath}/recordings`, 201, {});
  const recordingPath = `/v1/apps/${appId}/recordings/${String(started.id)}`;
  await waitFor('the recording to be active', 120_000, async () =>
    (await expectStatus(key, 'GET', recordingPath, 200)).status === 'active' ? true : undefined,
  );
  const activeAt = Date.now();
  writeFileSync(join(stateDir, 'active'), `${recordingPath}\n`);

  await waitFor('the upgrade to finish (STATE_DIR/go)', 900_000, () =>
    Promise.resolve(existsSync(join(stateDir, 'go')) ? true : undefined),
  );
  const during = await expectStatus(key, 'GET', recordingPath, 200);
  if (during.status !== 'active') throw new Error(`after the upgrade the recording is ${JSON.stringify(during)}`);
  await new Promise((r) => setTimeout(r, 3_000));
  const stopAt = Date.now();
  await expectStatus(key, 'POST', `${recordingPath}/stop`, 200);
  const done = await waitFor('the recording to complete', 180_000, async () => {
    const r = await expectStatus(key, 'GET', recordingPath, 200);
    if (r.status === 'failed') throw new GaveUp(`the recording failed: ${JSON.stringify(r)}`);
    return r.status === 'complete' ? r : undefined;
  });
  const file = await fetch(`${base}${recordingPath}/file`, { headers: { authorization: `Bearer ${key}` } });
  if (file.status !== 200) throw new Error(`GET ${recordingPath}/file: ${file.status}`);
  const path = join(stateDir, `recording.${String(done.location).split('.').pop() ?? 'bin'}`);
  writeFileSync(path, Buffer.from(await file.arrayBuffer()));
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', path]);
  const probe = JSON.parse(stdout) as { format: { duration?: string }; streams: { codec_type: string }[] };
  const durationS = Number(probe.format.duration ?? 0);
  const spannedS = (stopAt - activeAt) / 1000;
  console.log(
    JSON.stringify({ status: done.status, mode: done.mode, durationS, spannedS, streams: probe.streams.map((s) => s.codec_type) }),
  );
  if (!probe.streams.some((s) => s.codec_type === 'video')) throw new Error('the recording has no video stream');
  // The file covers the upgrade, not only what came before it (slack for the egress pipeline's start).
  if (durationS < spannedS * 0.5) throw new Error(`the recording lasts ${durationS} s, but it ran for ${spannedS} s`);
} finally {
  await publisher.stop();
}
process.exit(0);
