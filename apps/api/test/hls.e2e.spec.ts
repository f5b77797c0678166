import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HlsView, LimitRefusal, StartHlsBody, StreamToken, StreamView } from '@tally/contracts';
import { LivekitEgressClient, LivekitRoomClient } from '@tally/livekit';
import { type ApiClient, waitFor } from '@tally/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../worker/src/bootstrap.js';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';

const run = promisify(execFile);
const RETENTION_S = 3;

type SegmentEntry = Readonly<{ name: string; durationS: number }>;
type SegmentProbe = Readonly<{ durationS: number; streams: string[] }>;

/** The segments a playlist lists, with their #EXTINF durations. */
function segmentEntries(playlist: string): SegmentEntry[] {
  const entries: SegmentEntry[] = [];
  let durationS: number | undefined;
  for (const line of playlist.split('\n').map((l) => l.trim())) {
    const extinf = /^#EXTINF:([\d.]+),/.exec(line);
    if (extinf) durationS = Number(extinf[1]);
    else if (line.endsWith('.ts') && durationS !== undefined) {
      entries.push({ name: line, durationS });
      durationS = undefined;
    }
  }
  return entries;
}

describe('live HLS on a real segmented egress', () => {
  let harness: ApiHarness;
  // The worker's HLS sweep promotes sessions to live, stops them with their stream and deletes their segments.
  let worker: INestApplicationContext | undefined;
  let hlsDir: string;
  const publishers: Publisher[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'tally-hls-test-'));

  beforeAll(async () => {
    hlsDir = mkdtempSync(join(tmpdir(), 'tally-hls-'));
    harness = await startApiHarness({ TALLY_HLS_DIR: hlsDir, TALLY_HLS_RETENTION_S: String(RETENTION_S) }, { egress: true });
    worker = await startWorker(harness.stack.config, { logger: false });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await worker?.close();
    await harness?.stop();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(hlsDir, { recursive: true, force: true });
  });

  async function publishingStream(client: ApiClient, appId: string): Promise<StreamView> {
    const stream = await createStream(client, appId);
    const token = (await client.post<StreamToken>(`/v1/apps/${appId}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token));
    const live = await waitFor(
      'the stream to be live with its publisher',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${appId}/streams/${stream.id}`)).body;
        return s.status === 'live' && s.publishers === 1 ? s : undefined;
      },
      30_000,
    );
    await tracksUp(client, appId, stream.id);
    return live;
  }

  async function startHls(client: ApiClient, appId: string, streamId: string, body: Partial<StartHlsBody> = {}): Promise<HlsView> {
    type Started = Awaited<ReturnType<typeof client.post<HlsView>>>;
    // LiveKit lists the publisher's tracks a moment after it joins.
    return waitFor<Started>(
      'HLS to start',
      async () => {
        const r = await client.post<HlsView>(`/v1/apps/${appId}/streams/${streamId}/hls`, body);
        return r.status === 409 && JSON.stringify(r.body).includes('nothing is published') ? undefined : r;
      },
      20_000,
    ).then((r) => {
      if (r.status !== 201) throw new Error(`HLS start: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    });
  }

  /** The playlist once it lists at least `segments` segments (each listed segment is complete). */
  async function playlistOf(
    url: string,
    client: ApiClient,
    session: HlsView,
    segments = 1,
  ): Promise<{ response: Response; text: string; entries: SegmentEntry[] }> {
    const found = waitFor(
      `a playlist with ${segments} segment(s)`,
      async () => {
        const response = await fetch(url);
        if (response.status !== 200) return undefined;
        const text = await response.text();
        const entries = segmentEntries(text);
        return entries.length >= segments ? { response, text, entries } : undefined;
      },
      90_000 + segments * 10_000,
    );
    return found.catch(async (error: unknown) => {
      const now = (await client.get<HlsView>(`/v1/apps/${session.appId}/streams/${session.streamId}/hls`)).body;
      // What egress said, for a failure on a busy host that cannot be reproduced alone.
      const logFile = harness.stack.egress?.logFile;
      const egressLog =
        logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-60).join('\n') : '(no egress log)';
      throw new Error(`${String(error)}; session ${JSON.stringify(now)}\n--- egress log (last 60 lines)\n${egressLog}`);
    });
  }

  /** Downloads a segment the playlist names and probes it with ffprobe. */
  async function probeSegment(playlistUrl: string, name: string): Promise<{ response: Response; probe: SegmentProbe }> {
    const response = await fetch(new URL(name, playlistUrl));
    const file = join(scratch, name);
    writeFileSync(file, Buffer.from(await response.arrayBuffer()));
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'format=duration:stream=codec_type,codec_name',
      '-of',
      'json',
      file,
    ]);
    const parsed = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_type: string; codec_name: string }[] };
    return {
      response,
      probe: {
        durationS: Number(parsed.format.duration),
        streams: parsed.streams.map((st) => `${st.codec_type}/${st.codec_name}`).sort(),
      },
    };
  }

  it(
    'serves a published stream as HLS with sound and CDN cache headers, and deletes the segments after stop and retention',
    { timeout: 300_000 },
    async () => {
      const { app, client } = await createTenant(harness.admin, 'broadcaster');
      const stream = await publishingStream(client, app.id);

      const session = await startHls(client, app.id, stream.id);
      expect(session).toMatchObject({ mode: 'track_composite', preset: 'standard', segmentS: 2, audio: true, status: 'starting' });
      expect(session.playlistUrl).toMatch(new RegExp(`^${harness.anonymous.baseUrl}/hls/[0-9a-f]{32}/index\\.m3u8$`));
      expect((await client.post(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {})).status).toBe(409);

      const { response, text, entries } = await playlistOf(session.playlistUrl, client, session, 2);
      // What a LiveKit token tells anyone (the room name, so the app and stream ids) leads to no playlist.
      for (const derived of [`${app.id}/${stream.id}`, stream.room, `${app.id}/${stream.id}/${session.id}`]) {
        for (const file of ['index.m3u8', 'live.m3u8', entries[0]!.name]) {
          expect([derived, file, (await fetch(`${harness.anonymous.baseUrl}/hls/${derived}/${file}`)).status]).toEqual([
            derived,
            file,
            404,
          ]);
        }
      }
      expect(response.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
      expect(response.headers.get('cache-control')).toBe('public, max-age=1');
      expect(text).toMatch(/^#EXTM3U/);
      expect(text).toMatch(/#EXT-X-TARGETDURATION:2\n/);

      // A segment after the first: the playlist grows while the stream is live.
      const segmentName = entries[1]!.name;
      const { response: segment, probe } = await probeSegment(session.playlistUrl, segmentName);
      expect(segment.status).toBe(200);
      expect(segment.headers.get('content-type')).toBe('video/mp2t');
      expect(segment.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(probe.streams).toEqual(['audio/aac', 'video/h264']);

      const live = await waitFor('the session to be live', async () => {
        const s = (await client.get<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body;
        return s.status === 'live' ? s : undefined;
      });
      expect(live.id).toBe(session.id);
      expect((await client.get<{ items: { quota: string; used: number }[] }>(`/v1/apps/${app.id}/usage`)).body.items).toEqual(
        expect.arrayContaining([{ quota: 'maxRecordings', used: 1, limit: expect.any(Number) as number, guarantee: 0 }]),
      );

      const stopped = await client.delete<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`);
      expect(stopped.status).toBe(200);
      expect(stopped.body.status).toBe('stopped');
      expect(stopped.body.purgeAt).not.toBeNull();
      expect((await fetch(session.playlistUrl)).status).toBe(200);
      const sessionDir = join(hlsDir, app.id, stream.id, session.id);
      expect(existsSync(sessionDir)).toBe(true);

      await waitFor(
        'the segments to be deleted',
        async () => ((await fetch(session.playlistUrl)).status === 404 ? true : undefined),
        (RETENTION_S + 15) * 1000,
      );
      expect((await fetch(new URL(segmentName, session.playlistUrl))).status).toBe(404);
      expect(existsSync(sessionDir)).toBe(false);
      const usage = (await client.get<{ items: { quota: string; used: number }[] }>(`/v1/apps/${app.id}/usage`)).body.items;
      expect(usage.find((i) => i.quota === 'maxRecordings')?.used).toBe(0);
    },
  );

  it(
    'starts one session of many concurrent starts for a stream: the others answer 409 and keep no reservation',
    { timeout: 300_000 },
    async () => {
      const { app, client } = await createTenant(harness.admin, 'eager');
      await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxRecordings: 20 } });
      const stream = await publishingStream(client, app.id);
      const start = () => client.post<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
      // Every start must see the publisher's tracks, as LiveKit lists them to the API.
      const livekit = new LivekitRoomClient(harness.stack.config.livekit);
      await waitFor('LiveKit to list the published tracks', async () =>
        (await livekit.listParticipants(stream.room)).some((p) => p.tracks.length === 2) ? true : undefined,
      );
      const answers = await Promise.all(Array.from({ length: 4 }, start));

      const outcome = (r: (typeof answers)[number]) =>
        r.status === 201 ? 'started' : `${r.status} ${JSON.stringify((r.body as unknown as { error: unknown }).error)}`;
      const conflict = `409 ${JSON.stringify({ code: 'conflict', message: 'the stream already has live HLS' })}`;
      expect(answers.map(outcome).sort()).toEqual([conflict, conflict, conflict, 'started']);
      const started = answers.find((r) => r.status === 201)!.body;
      expect((await client.get<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body.id).toBe(started.id);
      const usage = (await client.get<{ items: { quota: string; used: number }[] }>(`/v1/apps/${app.id}/usage`)).body.items;
      expect(usage.find((i) => i.quota === 'maxRecordings')?.used).toBe(1);
      // Only the winner asked LiveKit for an egress.
      const egresses = new LivekitEgressClient(harness.stack.config.livekit);
      expect(await egresses.list({ activeOnly: true, room: stream.room })).toHaveLength(1);

      expect((await client.delete<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body.status).toBe('stopped');
    },
  );

  it('refuses HLS over the recordings quota with 429 app.recordings', { timeout: 120_000 }, async () => {
    const { app, client } = await createTenant(harness.admin, 'small');
    const stream = await publishingStream(client, app.id);
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxRecordings: 0 } });
    const refused = await waitFor('a refusal', async () => {
      const r = await client.post<LimitRefusal>(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
      return r.status === 409 ? undefined : r;
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.recordings', limit: 0 });
    expect((await client.get(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).status).toBe(404);
  });

  it(
    'serves the low_latency preset in 1 s segments, leaves the sound out on request, and stops when the stream ends',
    { timeout: 300_000 },
    async () => {
      const { app, client } = await createTenant(harness.admin, 'latency');
      const stream = await publishingStream(client, app.id);
      const session = await startHls(client, app.id, stream.id, { preset: 'low_latency', audio: false });
      expect(session).toMatchObject({ preset: 'low_latency', segmentS: 1, audio: false });

      const { response, text, entries } = await playlistOf(session.playlistUrl, client, session, 5);
      expect(response.headers.get('cache-control')).toBe('public, max-age=1');
      expect(text).toMatch(/#EXT-X-TARGETDURATION:1\n/);
      // Media time, not wall-clock time: a keyframe every second cuts a segment every second.
      const listed = entries.map((e) => e.durationS);
      const probed = await Promise.all(entries.slice(1, 4).map(async (e) => (await probeSegment(session.playlistUrl, e.name)).probe));
      for (const durationS of [...listed.slice(1), ...probed.map((p) => p.durationS)]) {
        expect(durationS).toBeGreaterThan(0.5);
        expect(durationS).toBeLessThan(1.5);
      }
      for (const p of probed) expect(p.streams).toEqual(['video/h264']);

      expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBe(200);
      // The worker's HLS sweep stops it: its next run, plus the egress stop LiveKit answers (seconds on a busy host).
      const stopped = await waitFor(
        'the session to stop with the stream',
        async () => {
          const s = (await client.get<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body;
          return s.status === 'stopped' ? s : undefined;
        },
        60_000,
      );
      expect(stopped.stoppedAt).not.toBeNull();
      // The retention period runs from the stop the user saw, however long LiveKit took to stop the egress.
      expect((await fetch(session.playlistUrl)).status).toBe(200);
      await waitFor(
        'the segments to be deleted',
        async () => ((await fetch(session.playlistUrl)).status === 404 ? true : undefined),
        (RETENTION_S + 15) * 1000,
      );
    },
  );
});
