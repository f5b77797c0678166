import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '@tally/testing/browser';

/** A WHIP publisher in Chromium: the browser's fake camera and microphone, offered to a WHIP endpoint. */
export type WhipPublisher = Readonly<{
  /** The HTTP status the WHIP endpoint answered the offer with (201 when it took it). */
  status: number;
  /** The session's resource URL (the answer's Location), where DELETE ends it. */
  resourceUrl: string;
  /** Resolves once the peer connection is connected (ICE and DTLS done, media flowing). */
  connected(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}>;

type Offer = Readonly<{ url: string; key: string }>;
type Answer = Readonly<{ status: number; location: string | null; error: string | null }>;

/**
 * What a browser WHIP client does (draft-ietf-wish-whip): capture camera and microphone, add them
 * send-only, gather ICE candidates (no STUN server: every candidate is a host address), POST the
 * offer as application/sdp with the stream key as a Bearer token, and apply the 201's answer.
 */
async function offerInPage({ url, key }: Offer): Promise<Answer> {
  type Pc = {
    localDescription: { sdp: string } | null;
    iceGatheringState: string;
    addEventListener(type: string, listener: () => void): void;
    addTransceiver(track: unknown, init: { direction: string }): void;
    createOffer(): Promise<unknown>;
    setLocalDescription(description: unknown): Promise<void>;
    setRemoteDescription(description: { type: string; sdp: string }): Promise<void>;
  };
  type Page = {
    navigator: { mediaDevices: { getUserMedia(c: unknown): Promise<{ getTracks(): unknown[] }> } };
    RTCPeerConnection: new (config: unknown) => Pc;
    whipPc?: Pc;
  };
  const page = globalThis as unknown as Page;
  const media = await page.navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 360, frameRate: 25 } });
  const pc = new page.RTCPeerConnection({ iceServers: [] });
  page.whipPc = pc;
  for (const track of media.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  // LiveKit ingress takes no trickled candidates: send the offer once gathering is complete.
  if (pc.iceGatheringState !== 'complete') {
    await new Promise<void>((resolve) =>
      pc.addEventListener('icegatheringstatechange', () => {
        if (pc.iceGatheringState === 'complete') resolve();
      }),
    );
  }
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${key}` },
    body: pc.localDescription?.sdp ?? '',
  });
  const text = await response.text();
  if (response.status !== 201) return { status: response.status, location: null, error: text };
  await pc.setRemoteDescription({ type: 'answer', sdp: text });
  return { status: response.status, location: response.headers.get('Location'), error: null };
}

/** An empty page on 127.0.0.1: a secure context (getUserMedia needs one), the origin the client runs in. */
async function servePage(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>WHIP publisher</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/** Publishes Chromium's fake camera and microphone to `url` (a WHIP endpoint) with `streamKey`. */
export async function publishWhip(url: string, streamKey: string, browser?: Browser): Promise<WhipPublisher> {
  const own = browser === undefined;
  const chromium = browser ?? (await launchChromium());
  const origin = await servePage();
  const close = async () => {
    if (own) await chromium.close();
    await new Promise((resolve) => origin.server.close(resolve));
  };
  let page: Page | undefined;
  try {
    page = await chromium.newPage();
    await page.goto(origin.url);
    const answer = await page.evaluate(offerInPage, { url, key: streamKey });
    if (answer.status !== 201 || answer.location === null) {
      throw new Error(`WHIP ${url} answered ${answer.status}: ${answer.error ?? 'no Location'}`);
    }
    const resourceUrl = new URL(answer.location, url).toString();
    const opened = page;
    return {
      status: answer.status,
      resourceUrl,
      async connected(timeoutMs = 30_000) {
        await opened.waitForFunction(
          () => (globalThis as { whipPc?: { connectionState: string } }).whipPc?.connectionState === 'connected',
          undefined,
          {
            timeout: timeoutMs,
          },
        );
      },
      async stop() {
        await fetch(resourceUrl, { method: 'DELETE' }).catch(() => undefined);
        await opened.close().catch(() => undefined);
        await close();
      },
    };
  } catch (error) {
    await page?.close().catch(() => undefined);
    await close();
    throw error;
  }
}
