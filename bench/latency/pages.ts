import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { checksum16, decodeClock, encodeClock, GRID } from './clock.js';

const LIVEKIT_CLIENT = join(import.meta.dirname, '..', '..', 'node_modules', 'livekit-client', 'dist', 'livekit-client.umd.js');

export type PublishOptions = Readonly<{ url: string; token: string; simulcast: boolean; codec: 'vp8' | 'h264' }>;
export type SubscriberResults = Readonly<{
  latencies: number[];
  bad: number;
  frames: number;
  width: number;
  height: number;
  codec?: string;
}>;

// The page functions below run in Chromium; their DOM types are not Node's, so they are typed loosely.
/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
type Loose = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A blank page with livekit-client and the clock functions loaded. */
export async function preparePage(page: Page): Promise<void> {
  await page.setContent('<!doctype html><html><body></body></html>');
  await page.addScriptTag({ path: LIVEKIT_CLIENT });
  await page.addScriptTag({ content: [checksum16, encodeClock, decodeClock].map((f) => f.toString()).join('\n') });
}

/** Draws the clock on a canvas every 10 ms and publishes the canvas as a camera track. */
export async function publishClock(page: Page, options: PublishOptions): Promise<void> {
  await page.evaluate(
    async ({ o, grid }) => {
      const w = globalThis as Loose;
      const LK = w.LivekitClient;
      const canvas = w.document.createElement('canvas');
      canvas.width = grid.width;
      canvas.height = grid.height;
      w.document.body.appendChild(canvas);
      const ctx = canvas.getContext('2d');
      const bw = grid.width / grid.cols;
      const bh = grid.height / grid.rows;
      const draw = () => {
        (w.encodeClock(Date.now()) as number[]).forEach((bit, i) => {
          ctx.fillStyle = bit ? '#fff' : '#000';
          ctx.fillRect((i % grid.cols) * bw, Math.floor(i / grid.cols) * bh, bw, bh);
        });
      };
      draw();
      setInterval(draw, 10);
      const room = new LK.Room({ dynacast: false });
      await room.connect(o.url, o.token);
      await room.localParticipant.publishTrack(canvas.captureStream(30).getVideoTracks()[0], {
        source: LK.Track.Source.Camera,
        simulcast: o.simulcast,
        videoCodec: o.codec,
        videoEncoding: { maxBitrate: 1_500_000, maxFramerate: 30 },
      });
      w.__room = room;
    },
    { o: options, grid: GRID },
  );
}

/** Subscribes and decodes every presented frame (requestVideoFrameCallback), recording now − drawn. */
export async function subscribeClock(page: Page, url: string, token: string): Promise<void> {
  await page.evaluate(
    async ({ url, token, grid }) => {
      const w = globalThis as Loose;
      const LK = w.LivekitClient;
      const results = { latencies: [] as number[], bad: 0, frames: 0, width: 0, height: 0 };
      w.__results = results;
      const room = new LK.Room({ adaptiveStream: false, dynacast: false });
      room.on(LK.RoomEvent.TrackSubscribed, (track: Loose) => {
        if (track.kind !== 'video') return;
        w.__track = track;
        const video = w.document.createElement('video');
        video.muted = true;
        video.autoplay = true;
        video.playsInline = true;
        w.document.body.appendChild(video);
        track.attach(video);
        const canvas = w.document.createElement('canvas');
        const ctx = canvas.getContext('2d', { willReadFrequently: true });
        const onFrame = (_now: number, meta: Loose) => {
          const width = meta.width as number;
          const height = meta.height as number;
          canvas.width = width;
          canvas.height = height;
          ctx.drawImage(video, 0, 0, width, height);
          const data = ctx.getImageData(0, 0, width, height).data;
          const bits: number[] = [];
          for (let i = 0; i < grid.cols * grid.rows; i++) {
            const x = Math.floor(((i % grid.cols) + 0.5) * (width / grid.cols));
            const y = Math.floor((Math.floor(i / grid.cols) + 0.5) * (height / grid.rows));
            const p = (y * width + x) * 4;
            bits.push((data[p] + data[p + 1] + data[p + 2]) / 3 > 128 ? 1 : 0);
          }
          const now = Date.now();
          const drawnAt = w.decodeClock(bits, now) as number | undefined;
          results.frames++;
          if (drawnAt === undefined) results.bad++;
          else results.latencies.push(now - drawnAt);
          results.width = width;
          results.height = height;
          video.requestVideoFrameCallback(onFrame);
        };
        video.requestVideoFrameCallback(onFrame);
      });
      await room.connect(url, token);
      w.__room = room;
    },
    { url, token, grid: GRID },
  );
}

/** Clears what was collected so far (the warm-up: connection, first keyframe, layer switches). */
export async function resetResults(page: Page): Promise<void> {
  await page.evaluate(() => {
    const r = (globalThis as Loose).__results;
    r.latencies = [];
    r.bad = 0;
    r.frames = 0;
  });
}

export async function readResults(page: Page): Promise<SubscriberResults> {
  return page.evaluate(async () => {
    const w = globalThis as Loose;
    let codec: string | undefined;
    const stats = await w.__track?.receiver?.getStats();
    stats?.forEach((report: Loose) => {
      if (report.type === 'inbound-rtp' && report.kind === 'video' && report.codecId) codec = stats.get(report.codecId)?.mimeType;
    });
    return { ...w.__results, codec };
  });
}

export async function framesSeen(page: Page): Promise<number> {
  return page.evaluate(() => ((globalThis as Loose).__results?.frames as number | undefined) ?? 0);
}

export async function leave(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await (globalThis as Loose).__room?.disconnect();
  });
}
