/**
 * A WHIP publisher whose network drops UDP (scripts/install-hosts.int.sh), on a node installed with
 * `--domain NAME` and TURN over TLS (`--turn-address IP`: turns:TURN_HOST:443): Debian's Chromium in a
 * network namespace of its own whose firewall drops every UDP packet and refuses TCP to every port
 * but 443 and the WHIP endpoint's, trusting only Caddy's CA. Through https://NAME an app creates a
 * stream and a WHIP ingress; the page POSTs its offer (fake camera and microphone) to the ingress
 * URL with the stream key and takes the ICE servers from the answer's Link headers (RFC 9725
 * section 4.6), publishing again once if its first session fails to connect. The stream must go
 * live, the publisher's media must go over a relay candidate reached over TLS from
 * turns:TURN_HOST:443 with credentials that expire within hours, and a recording of it must
 * complete with audio and video. Prints what a failed attempt's peer connection went through, the
 * candidate used, then one JSON line; exit 0 = all of that held.
 *
 * Usage: node --import @swc-node/register/esm-register scripts/install-hosts/whip-over-turn.ts BASE_URL ADMIN_KEY_FILE CA_FILE NODE_IP TURN_HOST TURN_IP
 * (NODE_EXTRA_CA_CERTS=CA_FILE for the API calls.)
 */
import { readFileSync } from 'node:fs';
import {
  launchFirewalledChromium,
  publishWhipFromPage,
  selectedPaths,
  startClientNamespace,
  stopWhipFromPage,
  whipConnectionState,
  whipReport,
  type WhipSession,
} from '@tally/testing/browser';
import type { Page } from 'playwright-core';
import { apiCaller, GaveUp, recordBothTracks, waitFor } from './api-call.js';

const [base, adminKeyFile, caFile, nodeIp, turnHost, turnIp] = process.argv.slice(2) as [string, string, string, string, string, string];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
const domain = new URL(base).hostname;
const call = apiCaller(base);
/** LiveKit's participants get 4-hour TURN credentials; WHIP publishers the same. */
const CREDENTIAL_TTL_S = 4 * 3600;

const app = await call(adminKey, 'POST', '/v1/apps', 201, { name: 'whip-without-udp' });
const appId = String(app.id);
const key = String((await call(adminKey, 'POST', `/v1/apps/${appId}/keys`, 201)).key);
const stream = await call(key, 'POST', `/v1/apps/${appId}/streams`, 201, { name: 'field reporter' });
const streamPath = `/v1/apps/${appId}/streams/${String(stream.id)}`;
const ingress = await call(key, 'POST', `/v1/apps/${appId}/ingresses`, 201, { streamId: String(stream.id), kind: 'whip' });
const whipUrl = new URL(String(ingress.url));
if (whipUrl.hostname !== nodeIp) throw new Error(`the WHIP URL ${whipUrl.href} does not name the node's address ${nodeIp}`);

const ns = await startClientNamespace({ tcpPorts: [443, Number(whipUrl.port)] });
const chromium = await launchFirewalledChromium(ns, caFile, { [domain]: nodeIp, [turnHost]: turnIp });
let page: Page | undefined;
/** How often, and after what pause, the publisher publishes again when a session fails to connect. */
const RETRY_PAUSES_MS = [2_000];
/**
 * Publishes and waits for the peer connection. LiveKit ingress gives a WHIP session 10 s to bring its
 * tracks (`sessionStartTimeout`), then fails it; a WHIP client then publishes again to the same
 * endpoint after a pause, and so does this one (once), saying so and printing what the failed
 * session's peer connection went through.
 */
async function publishConnected(attempt: number): Promise<{ page: Page; session: WhipSession }> {
  const published = await publishWhipFromPage(chromium.browser, whipUrl.href, String(ingress.streamKey));
  page = published.page;
  const state = await waitFor("the WHIP publisher's connection", 90_000, async () => {
    const now = await whipConnectionState(published.page);
    return now === 'connected' || now === 'failed' || now === 'closed' ? now : undefined;
  });
  if (state === 'connected') return published;
  const report = await whipReport(published.page);
  for (const line of report) console.log(`[whip-turn] attempt ${attempt}: ${line}`);
  const pause = RETRY_PAUSES_MS[attempt - 1];
  if (pause === undefined)
    throw new Error(`the WHIP peer connection ${state} in each of ${attempt} sessions; the last went through: ${report.join('; ')}`);
  console.log(
    `[whip-turn] the WHIP peer connection ${state}: publishing again to the same endpoint in ${pause / 1000} s, as a WHIP client does`,
  );
  await published.page.context().close();
  await new Promise((r) => setTimeout(r, pause));
  return publishConnected(attempt + 1);
}
try {
  const { page: connected, session } = await publishConnected(1);

  const expectedUrl = `turns:${turnHost}:443?transport=tcp`;
  const handed = session.iceServers.find((s) => s.urls === expectedUrl);
  if (handed?.username === undefined || handed.credential === undefined)
    throw new Error(`the WHIP answer named ${JSON.stringify(session.iceServers.map((s) => s.urls))}, not ${expectedUrl} with credentials`);
  const expiresInS = Number(handed.username.split(':')[0]) - Date.now() / 1000;
  if (!(expiresInS > 0 && expiresInS <= CREDENTIAL_TTL_S + 60))
    throw new Error(`the TURN credentials ${handed.username} expire in ${Math.round(expiresInS)} s, not within ${CREDENTIAL_TTL_S} s`);

  await waitFor('the stream to be live with the WHIP publisher', 90_000, async () => {
    const s = await call(key, 'GET', streamPath, 200);
    return s.status === 'live' ? s : undefined;
  });
  const paths = await waitFor("the WHIP publisher's media path", 60_000, async () => {
    const found = await selectedPaths(connected);
    return found.some((p) => p.bytesSent > 0 && p.bytesReceived > 0) ? found : undefined;
  });
  for (const path of paths) {
    console.log(
      `[whip-turn] publisher: candidate ${path.candidateType}, relay protocol ${path.relayProtocol}, via ${path.url} to ${path.remote}`,
    );
    if (path.candidateType !== 'relay' || path.relayProtocol !== 'tls' || path.url !== expectedUrl)
      throw new Error(
        `the WHIP publisher's media went over a ${path.candidateType} candidate (${path.relayProtocol}, ${path.url}), not a relay over TLS`,
      );
  }

  const started = await recordBothTracks(call, key, streamPath, (line) => console.log(`[whip-turn] ${line}`));
  const recordingPath = `/v1/apps/${appId}/recordings/${String(started.id)}`;
  await waitFor('the recording to be active', 120_000, async () => {
    const r = await call(key, 'GET', recordingPath, 200);
    if (r.status === 'failed') throw new GaveUp(`the recording failed: ${JSON.stringify(r)}`);
    return r.status === 'active' ? true : undefined;
  });
  await new Promise((r) => setTimeout(r, 5_000));
  // The publisher ends its session (DELETE on the resource, from inside its firewall), as a WHIP client does.
  const deleted = await stopWhipFromPage(connected, session);
  if (deleted !== 200) throw new Error(`DELETE ${session.resourceUrl} answered ${deleted}`);
  const done = await waitFor('the recording to end', 180_000, async () => {
    const r = await call(key, 'GET', recordingPath, 200);
    return r.status === 'complete' || r.status === 'failed' ? r : undefined;
  });
  const codecs = ((done.codecs as { type: string }[] | null) ?? []).map((c) => c.type).sort();
  if (done.status !== 'complete' || codecs.join() !== 'audio,video')
    throw new Error(`the recording ended ${JSON.stringify(done)}, not complete with audio and video`);
  console.log(
    JSON.stringify({
      path: paths.map((p) => ({ candidate: p.candidateType, protocol: p.relayProtocol, url: p.url })),
      credentialExpiresInS: Math.round(expiresInS),
      recording: { status: done.status, mode: done.mode, durationS: done.durationS, codecs },
    }),
  );
} finally {
  await page
    ?.context()
    .close()
    .catch(() => undefined);
  await chromium.stop();
  await ns.stop();
}
process.exit(0);
