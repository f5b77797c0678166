import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { ClientNamespace } from './client-namespace.js';
import { type Browser, chromium, type Page } from 'playwright-core';

const run = promisify(execFile);
const CHROMIUM = process.env['TALLY_CHROMIUM'] ?? '/usr/bin/chromium';
// The UMD build (global LivekitClient) beside the package's main entry; it is not in its exports map.
const LIVEKIT_CLIENT = join(dirname(createRequire(import.meta.url).resolve('livekit-client')), 'livekit-client.umd.js');
/** A secure origin (getUserMedia needs one) that Playwright answers itself: the page needs no network. */
const PAGE_URL = 'http://localhost/';

/** The ICE path a peer connection of the page settled on (its selected candidate pair). */
export type SelectedPath = Readonly<{
  candidateType: string;
  /** For a relay candidate: how the client reaches its TURN server (udp, tcp or tls). */
  relayProtocol: string | null;
  /** The TURN server URL the relay candidate came from. */
  url: string | null;
  remote: string;
  bytesSent: number;
  bytesReceived: number;
  /** The ICE servers LiveKit handed the client (its join response). */
  iceServers: string[];
}>;

export type FirewalledBrowser = Readonly<{ browser: Browser; stop(): Promise<void> }>;

/**
 * Debian's Chromium inside a client namespace, trusting `caFile` (when given) the way a user's
 * browser trusts a CA (its NSS database, as Chromium reads it on Linux), and resolving `hosts`
 * without DNS. Chromium verifies a TURN server's TLS certificate like a web server's.
 */
export async function launchFirewalledChromium(
  ns: ClientNamespace,
  caFile: string | undefined,
  hosts: Readonly<Record<string, string>>,
): Promise<FirewalledBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium fonts-liberation`);
  const home = mkdtempSync(join(tmpdir(), 'tally-chromium-home-'));
  const nssdb = `sql:${join(home, '.pki', 'nssdb')}`;
  mkdirSync(join(home, '.pki', 'nssdb'), { recursive: true });
  await run('certutil', ['-d', nssdb, '-N', '--empty-password']);
  if (caFile !== undefined) await run('certutil', ['-d', nssdb, '-A', '-t', 'C,,', '-n', 'tally-test-ca', '-i', caFile]);
  const wrapper = join(home, 'chromium-in-namespace');
  writeFileSync(wrapper, `#!/bin/sh\nexec nsenter --net=/run/netns/${ns.name} ${CHROMIUM} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const rules = Object.entries(hosts)
    .map(([name, ip]) => `MAP ${name} ${ip}`)
    .join(',');
  const browser = await chromium.launch({
    executablePath: wrapper,
    headless: true,
    env: { ...process.env, HOME: home },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      '--autoplay-policy=no-user-gesture-required',
      `--host-resolver-rules=${rules}`,
    ],
  });
  return {
    browser,
    async stop() {
      await browser.close().catch(() => undefined);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Records every RTCPeerConnection the page makes, and joins with livekit-client. */
const PAGE_SCRIPT = `
const connections = [];
const NativePeerConnection = window.RTCPeerConnection;
window.RTCPeerConnection = class extends NativePeerConnection {
  constructor(config, ...rest) {
    super(config, ...rest);
    connections.push(this);
  }
};
const started = Date.now();
window.tally = {
  room: undefined,
  events: [],
  async join(url, token, publish) {
    // One video layer, like the other tests' publishers: what is under test is the path, not simulcast.
    const room = new LivekitClient.Room({ adaptiveStream: false, dynacast: false, publishDefaults: { simulcast: false } });
    window.tally.room = room;
    // What happened to the room, for a failure's report: reconnections and tracks coming and going.
    const note = (event, detail) => window.tally.events.push(((Date.now() - started) / 1000).toFixed(1) + 's ' + event + (detail ? ' ' + detail : ''));
    const E = LivekitClient.RoomEvent;
    room.on(E.Reconnecting, () => note('reconnecting'));
    room.on(E.SignalReconnecting, () => note('signal reconnecting'));
    room.on(E.Reconnected, () => note('reconnected'));
    room.on(E.Disconnected, (reason) => note('disconnected', String(reason)));
    room.on(E.LocalTrackPublished, (pub) => note('published', pub.kind));
    room.on(E.LocalTrackUnpublished, (pub) => note('unpublished', pub.kind));
    room.on(E.TrackMuted, (pub, p) => note('muted', pub.kind + ' of ' + p.identity));
    room.on(E.TrackUnmuted, (pub, p) => note('unmuted', pub.kind + ' of ' + p.identity));
    room.on(E.TrackSubscribed, (track) => note('subscribed', track.kind));
    room.on(E.TrackUnsubscribed, (track) => note('unsubscribed', track.kind));
    room.on(E.MediaDevicesError, (error) => note('media devices error', String(error)));
    room.on(LivekitClient.RoomEvent.TrackSubscribed, (track) => {
      if (track.kind !== 'video') return;
      const video = track.attach();
      video.id = 'remote-video';
      video.muted = true;
      document.body.appendChild(video);
    });
    await room.connect(url, token, { autoSubscribe: !publish });
    if (publish) await room.localParticipant.enableCameraAndMicrophone();
  },
  roomEvents() {
    return window.tally.events;
  },
  /** The room's state and the tracks of it this page sends (a publisher) or receives (a viewer), as kind:sid. */
  trackSids() {
    const room = window.tally.room;
    const pubs = [...room.localParticipant.trackPublications.values()];
    for (const p of room.remoteParticipants.values()) pubs.push(...p.trackPublications.values());
    return { state: room.state, tracks: pubs.filter((pub) => pub.track).map((pub) => pub.kind + ':' + pub.trackSid).sort() };
  },
  subscribedKinds() {
    const kinds = [];
    for (const p of window.tally.room.remoteParticipants.values())
      for (const pub of p.trackPublications.values()) if (pub.track) kinds.push(pub.kind);
    return kinds.sort();
  },
  async leave() {
    await window.tally.room.disconnect();
  },
  // A WHIP publisher (RFC 9725): the offer goes out before ICE gathers, so the ICE servers the
  // endpoint names in its answer's Link headers (section 4.6) are set before the offer is applied
  // and ICE gathers with them (LiveKit ingress takes no trickled candidates).
  async whip(url, key) {
    const media = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 360, frameRate: 25 } });
    const pc = new RTCPeerConnection();
    const began = Date.now();
    const note = (line) => window.tally.whipEvents.push(((Date.now() - began) / 1000).toFixed(1) + 's ' + line);
    window.tally.whipEvents = [];
    pc.addEventListener('icecandidate', (e) => note(e.candidate ? 'candidate ' + e.candidate.type + ' ' + (e.candidate.relayProtocol || '') + ' ' + e.candidate.address + ':' + e.candidate.port : 'gathering complete'));
    pc.addEventListener('icecandidateerror', (e) => note('candidate error ' + e.errorCode + ' ' + e.errorText + ' (' + e.url + ')'));
    pc.addEventListener('iceconnectionstatechange', () => note('ice ' + pc.iceConnectionState));
    pc.addEventListener('connectionstatechange', () => note('connection ' + pc.connectionState));
    for (const track of media.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
    const offer = await pc.createOffer();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/sdp', Authorization: 'Bearer ' + key },
      body: offer.sdp,
    });
    const answer = await response.text();
    if (response.status !== 201) throw new Error('WHIP ' + url + ' answered ' + response.status + ': ' + answer);
    for (const line of answer.split(/\\r?\\n/)) if (line.startsWith('a=candidate:')) note('answer ' + line.slice(2));
    const iceServers = [];
    for (const [, uri, params] of (response.headers.get('Link') || '').matchAll(/<([^>]*)>([^<]*)/g)) {
      const p = Object.fromEntries([...params.matchAll(/([a-z-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      if (p.rel !== 'ice-server') continue;
      iceServers.push(p.username === undefined ? { urls: uri } : { urls: uri, username: p.username, credential: p.credential });
    }
    pc.setConfiguration({ ...pc.getConfiguration(), iceServers });
    await pc.setLocalDescription(offer);
    await pc.setRemoteDescription({ type: 'answer', sdp: answer });
    window.tally.whipPc = pc;
    return { resourceUrl: new URL(response.headers.get('Location'), url).toString(), iceServers };
  },
  async whipStop(resourceUrl) {
    const response = await fetch(resourceUrl, { method: 'DELETE' });
    return response.status;
  },
  whipState() {
    return window.tally.whipPc ? window.tally.whipPc.connectionState : 'new';
  },
  /** What the WHIP peer connection went through (candidates, their errors, states) and its candidate pairs. */
  async whipReport() {
    const pairs = [];
    const stats = window.tally.whipPc ? await window.tally.whipPc.getStats() : new Map();
    stats.forEach((s) => {
      if (s.type !== 'candidate-pair') return;
      const local = stats.get(s.localCandidateId);
      const remote = stats.get(s.remoteCandidateId);
      pairs.push(s.state + ' ' + local.candidateType + ' ' + local.address + ':' + local.port + ' -> ' + remote.candidateType + ' ' + remote.address + ':' + remote.port + ' (requests ' + s.requestsSent + ', responses ' + s.responsesReceived + ')');
    });
    return (window.tally.whipEvents || []).concat(pairs.map((p) => 'pair ' + p));
  },
  async paths() {
    const out = [];
    for (const pc of connections) {
      const iceServers = (pc.getConfiguration().iceServers || []).flatMap((s) => [].concat(s.urls));
      const stats = await pc.getStats();
      let pairId;
      stats.forEach((s) => { if (s.type === 'transport' && s.selectedCandidatePairId) pairId = s.selectedCandidatePairId; });
      const pair = pairId && stats.get(pairId);
      if (!pair || pair.state !== 'succeeded') continue;
      const local = stats.get(pair.localCandidateId);
      const remote = stats.get(pair.remoteCandidateId);
      out.push({
        candidateType: local.candidateType,
        relayProtocol: local.relayProtocol || null,
        url: local.url || null,
        remote: remote.address + ':' + remote.port,
        bytesSent: pair.bytesSent,
        bytesReceived: pair.bytesReceived,
        iceServers,
      });
    }
    return out;
  },
};
`;

type PageApi = {
  tally: {
    join(url: string, token: string, publish: boolean): Promise<void>;
    subscribedKinds(): string[];
    roomEvents(): string[];
    trackSids(): { state: string; tracks: string[] };
    leave(): Promise<void>;
    paths(): Promise<SelectedPath[]>;
    whip(url: string, key: string): Promise<WhipSession>;
    whipState(): string;
    whipReport(): Promise<string[]>;
    whipStop(resourceUrl: string): Promise<number>;
  };
};

/** A WHIP publish from a page: where DELETE ends it, and the ICE servers the endpoint's Link headers named. */
export type WhipSession = Readonly<{
  resourceUrl: string;
  iceServers: readonly Readonly<{ urls: string; username?: string; credential?: string }>[];
}>;
// Functions passed to page.evaluate run in the page: they may reference nothing of this module.

/** An empty page on a secure origin, allowed the camera, the microphone and the media server's private address. */
export async function openBlankPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  // A page of one origin reaching a media server on a private address: what an app's users grant on a LAN.
  await context.grantPermissions(['camera', 'microphone', 'local-network-access'], { origin: PAGE_URL });
  const page = await context.newPage();
  await page.route(PAGE_URL, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><html><body></body></html>' }));
  await page.goto(PAGE_URL);
  return page;
}

/** A page of `browser` joined to a LiveKit room with a token, publishing its (fake) camera and microphone or viewing. */
export async function joinFromPage(browser: Browser, url: string, token: string, publish: boolean): Promise<Page> {
  const page = await openBlankPage(browser);
  await page.addScriptTag({ content: PAGE_SCRIPT });
  await page.addScriptTag({ path: LIVEKIT_CLIENT });
  await page.evaluate(([u, t, p]) => (globalThis as unknown as PageApi).tally.join(u, t, p), [url, token, publish] as const);
  return page;
}

export function selectedPaths(page: Page): Promise<SelectedPath[]> {
  return page.evaluate(() => (globalThis as unknown as PageApi).tally.paths());
}

export function subscribedKinds(page: Page): Promise<string[]> {
  return page.evaluate(() => (globalThis as unknown as PageApi).tally.subscribedKinds());
}

export async function leave(page: Page): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as PageApi).tally.leave());
  await page.context().close();
}

/** What the page's room went through (reconnections, tracks published, muted, subscribed), with seconds since the page loaded. */
export function roomEvents(page: Page): Promise<string[]> {
  return page.evaluate(() => (globalThis as unknown as PageApi).tally.roomEvents());
}

/** The page's room state and the tracks it sends or receives (`kind:sid`, sorted). */
export function trackSids(page: Page): Promise<{ state: string; tracks: string[] }> {
  return page.evaluate(() => (globalThis as unknown as PageApi).tally.trackSids());
}

/**
 * A page of `browser` publishing its (fake) camera and microphone to a WHIP endpoint with a stream
 * key, with the ICE servers the endpoint hands out; resolves once the endpoint answered.
 */
export async function publishWhipFromPage(browser: Browser, url: string, streamKey: string): Promise<{ page: Page; session: WhipSession }> {
  const page = await openBlankPage(browser);
  await page.addScriptTag({ content: PAGE_SCRIPT });
  const session = await page.evaluate(([u, k]) => (globalThis as unknown as PageApi).tally.whip(u, k), [url, streamKey] as const);
  return { page, session };
}

/** The WHIP publisher's peer connection state (`connected` once ICE and DTLS are done). */
export function whipConnectionState(page: Page): Promise<string> {
  return page.evaluate(() => (globalThis as unknown as PageApi).tally.whipState());
}

/** What the page's WHIP peer connection went through (ICE candidates, candidate errors, states, candidate pairs), with seconds since it was made. */
export function whipReport(page: Page): Promise<string[]> {
  return page.evaluate(() => (globalThis as unknown as PageApi).tally.whipReport());
}

/** Ends the page's WHIP session as its client does (DELETE on the resource, from the page): the HTTP status. */
export function stopWhipFromPage(page: Page, session: WhipSession): Promise<number> {
  return page.evaluate((url) => (globalThis as unknown as PageApi).tally.whipStop(url), session.resourceUrl);
}
