/**
 * A user whose network passes only TCP 443 (scripts/install-hosts.int.sh), on a node installed with
 * `--domain NAME --turn-address IP`: Debian's Chromium runs in a network namespace of its own whose
 * firewall drops every UDP packet and refuses TCP to every port but 443, trusts only Caddy's CA,
 * and resolves NAME to the node's address and TURN_HOST to IP. Through https://NAME it creates an
 * app, a stream and two tokens, as an app would; a publisher (fake camera and microphone) and a
 * viewer join with them (livekit-client over wss://NAME). The viewer must receive audio and decoded
 * video, both peer connections must carry media over a relay candidate reached over TLS from the
 * turns: URL LiveKit handed them, and a recording of the stream must complete with audio and video.
 * Prints the candidate types used, then one JSON line; exit 0 = all of that held.
 *
 * Usage: node --import @swc-node/register/esm-register scripts/install-hosts/turn-443-browser.ts BASE_URL ADMIN_KEY_FILE CA_FILE NODE_IP TURN_HOST TURN_IP
 * (NODE_EXTRA_CA_CERTS=CA_FILE for the API calls.)
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import {
  joinFromPage,
  launchFirewalledChromium,
  leave,
  roomEvents,
  selectedPaths,
  startClientNamespace,
  subscribedKinds,
  trackSids,
} from '@tally/testing/browser';
import type { Page } from 'playwright-core';
import { apiCaller, type Json, recordBothTracks, waitFor } from './api-call.js';

const run = promisify(execFile);
const [base, adminKeyFile, caFile, nodeIp, turnHost, turnIp] = process.argv.slice(2) as [string, string, string, string, string, string];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
const domain = new URL(base).hostname;
const call = apiCaller(base);

const ns = await startClientNamespace({ tcpPorts: [443] });
const chromium = await launchFirewalledChromium(ns, caFile, { [domain]: nodeIp, [turnHost]: turnIp });
const pages: Page[] = [];
try {
  await publishViewAndRecord();
} catch (error) {
  // What each page's room went through, to tell a network or client failure from the platform's.
  for (const [k, page] of pages.entries())
    console.error(`[turn-443] ${k === 0 ? 'publisher' : 'viewer'} room events: ${(await roomEvents(page).catch(() => [])).join('; ')}`);
  throw error;
} finally {
  for (const page of pages)
    await page
      .context()
      .close()
      .catch(() => undefined);
  await chromium.stop();
  await ns.stop();
}
process.exit(0);

async function publishViewAndRecord(): Promise<void> {
  // The firewall is what the test says it is: the media port over TCP is refused from the client's namespace.
  const mediaTcp = await run('nsenter', [`--net=/run/netns/${ns.name}`, 'bash', '-c', `exec 3<>/dev/tcp/${nodeIp}/7881`]).then(
    () => 'open',
    () => 'refused',
  );
  if (mediaTcp !== 'refused') throw new Error(`the client's firewall let TCP to ${nodeIp}:7881 through`);

  const app = await call(adminKey, 'POST', '/v1/apps', 201, { name: 'tcp-443-only' });
  const appId = String(app.id);
  const key = String((await call(adminKey, 'POST', `/v1/apps/${appId}/keys`, 201)).key);
  const stream = await call(key, 'POST', `/v1/apps/${appId}/streams`, 201, { name: 'hotel wifi' });
  const streamPath = `/v1/apps/${appId}/streams/${String(stream.id)}`;
  const host = await call(key, 'POST', `${streamPath}/tokens`, 201, { identity: 'host', role: 'publisher' });
  const fan = await call(key, 'POST', `${streamPath}/tokens`, 201, { identity: 'fan', role: 'viewer' });

  const publisher = await joinFromPage(chromium.browser, String(host.url), String(host.token), true);
  pages.push(publisher);
  await waitFor('the stream to be live with its publisher', 90_000, async () => {
    const s = await call(key, 'GET', streamPath, 200);
    return s.status === 'live' && s.publishers === 1 ? s : undefined;
  });
  const viewer = await joinFromPage(chromium.browser, String(fan.url), String(fan.token), false);
  pages.push(viewer);
  const kinds = await waitFor('the viewer to receive audio and video', 90_000, async () => {
    const k = await subscribedKinds(viewer);
    return k.length === 2 ? k : undefined;
  });
  if (kinds.join() !== 'audio,video') throw new Error(`the viewer received ${kinds.join()}`);
  await viewer.waitForFunction(
    () => {
      const video = (
        globalThis as unknown as { document: { querySelector(s: string): { readyState: number; videoWidth: number } | null } }
      ).document.querySelector('#remote-video');
      return video !== null && video.readyState >= 2 && video.videoWidth > 0;
    },
    undefined,
    { timeout: 90_000 },
  );

  const expectedUrl = `turns:${turnHost}:443?transport=tcp`;
  const used: Json[] = [];
  for (const [who, page] of [
    ['publisher', publisher],
    ['viewer', viewer],
  ] as const) {
    const paths = await waitFor(`the ${who}'s media path`, 60_000, async () => {
      const found = await selectedPaths(page);
      return found.some((p) => p.bytesReceived > 0 && p.bytesSent > 0) ? found : undefined;
    });
    for (const path of paths) {
      console.log(
        `[turn-443] ${who}: candidate ${path.candidateType}, relay protocol ${path.relayProtocol}, via ${path.url} to ${path.remote}`,
      );
      used.push({ who, candidate: path.candidateType, protocol: path.relayProtocol, url: path.url });
      if (!path.iceServers.includes(expectedUrl))
        throw new Error(`LiveKit handed the ${who} ${JSON.stringify(path.iceServers)}, not ${expectedUrl}`);
      if (path.candidateType !== 'relay' || path.relayProtocol !== 'tls')
        throw new Error(`the ${who}'s media went over a ${path.candidateType} candidate (${path.relayProtocol}), not a relay over TLS`);
    }
  }

  // The recording records what LiveKit lists when it starts: wait until the publisher is settled
  // (connected, the viewer receiving exactly the tracks it sends, the same for two polls 2 s apart)
  // so that a reconnection of the publisher (which publishes its tracks anew) is not mistaken for it.
  let settled = '';
  await waitFor('the publisher and the viewer to agree on the tracks', 90_000, async () => {
    const [sent, received] = await Promise.all([trackSids(publisher), trackSids(viewer)]);
    const now = sent.state === 'connected' && sent.tracks.length === 2 ? sent.tracks.join() : '';
    const agreed = now !== '' && received.tracks.join() === now && now === settled;
    settled = now;
    if (!agreed) await new Promise((r) => setTimeout(r, 1_500));
    return agreed ? true : undefined;
  });
  const started = await recordBothTracks(call, key, streamPath, (line) => console.log(`[turn-443] ${line}`));
  const recordingPath = `/v1/apps/${appId}/recordings/${String(started.id)}`;
  await waitFor('the recording to be active', 120_000, async () =>
    (await call(key, 'GET', recordingPath, 200)).status === 'active' ? true : undefined,
  );
  await new Promise((r) => setTimeout(r, 5_000));
  await leave(publisher);
  const done = await waitFor('the recording to end', 180_000, async () => {
    const r = await call(key, 'GET', recordingPath, 200);
    return r.status === 'complete' || r.status === 'failed' ? r : undefined;
  });
  const codecs = ((done.codecs as { type: string }[] | null) ?? []).map((c) => c.type).sort();
  if (done.status !== 'complete' || codecs.join() !== 'audio,video')
    throw new Error(`the recording ended ${JSON.stringify(done)}, not complete with audio and video`);
  console.log(JSON.stringify({ paths: used, recording: { status: done.status, mode: done.mode, durationS: done.durationS, codecs } }));
}
