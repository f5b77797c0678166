import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HlsView, LimitRefusal, StreamToken, StreamView } from '@tally/contracts';
import { type ApiClient, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher } from './media-client.js';

const run = promisify(execFile);
const RETENTION_S = 3;

describe('live HLS on a real segmented egress', () => {
  let harness: ApiHarness;
  let hlsDir: string;
  const publishers: Publisher[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'tally-hls-test-'));

  beforeAll(async () => {
    hlsDir = mkdtempSync(join(tmpdir(), 'tally-hls-'));
    harness = await startApiHarness({ TALLY_HLS_DIR: hlsDir, TALLY_HLS_RETENTION_S: String(RETENTION_S) }, { egress: true });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await harness?.stop();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(hlsDir, { recursive: true, force: true });
  });

  async function publishingStream(client: ApiClient, appId: string): Promise<StreamView> {
    const stream = await createStream(client, appId);
    const token = (await client.post<StreamToken>(`/v1/apps/${appId}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token));
    return waitFor(
      'the stream to be live with its publisher',
      async () => {
        const s = (await client.get<StreamView>(`/v1/apps/${appId}/streams/${stream.id}`)).body;
        return s.status === 'live' && s.publishers === 1 ? s : undefined;
      },
      30_000,
    );
  }

  /**
   * Video-only: the egress built here encodes AAC with voaacenc (Debian has no faac), whose output
   * mpegtsmux cannot take, so HLS with sound fails in this toolchain (docs/hls.md).
   */
  async function startHls(client: ApiClient, appId: string, streamId: string): Promise<HlsView> {
    type Started = Awaited<ReturnType<typeof client.post<HlsView>>>;
    // LiveKit lists the publisher's tracks a moment after it joins.
    return waitFor<Started>(
      'HLS to start',
      async () => {
        const r = await client.post<HlsView>(`/v1/apps/${appId}/streams/${streamId}/hls`, { audio: false });
        return r.status === 409 && JSON.stringify(r.body).includes('nothing is published') ? undefined : r;
      },
      20_000,
    ).then((r) => {
      if (r.status !== 201) throw new Error(`HLS start: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    });
  }

  async function playlistOf(url: string, client: ApiClient, session: HlsView): Promise<{ response: Response; text: string }> {
    const found = waitFor(
      'a playlist with a segment',
      async () => {
        const response = await fetch(url);
        if (response.status !== 200) return undefined;
        const text = await response.text();
        return /\.ts\s*$/m.test(text) ? { response, text } : undefined;
      },
      90_000,
    );
    return found.catch(async (error: unknown) => {
      const now = (await client.get<HlsView>(`/v1/apps/${session.appId}/streams/${session.streamId}/hls`)).body;
      throw new Error(`${String(error)}; session ${JSON.stringify(now)}`);
    });
  }

  it(
    'serves a published stream as HLS with CDN cache headers, and deletes the segments after stop and retention',
    { timeout: 300_000 },
    async () => {
      const { app, client } = await createTenant(harness.admin, 'broadcaster');
      const stream = await publishingStream(client, app.id);

      const session = await startHls(client, app.id, stream.id);
      expect(session).toMatchObject({ mode: 'track_composite', preset: 'standard', segmentS: 2, audio: false, status: 'starting' });
      expect(session.playlistUrl).toBe(`${harness.anonymous.baseUrl}/hls/${app.id}/${stream.id}/index.m3u8`);
      expect((await client.post(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {})).status).toBe(409);

      const { response, text } = await playlistOf(session.playlistUrl, client, session);
      expect(response.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
      expect(response.headers.get('cache-control')).toBe('public, max-age=1');
      expect(text).toMatch(/^#EXTM3U/);
      expect(text).toMatch(/#EXT-X-TARGETDURATION:[23]/);

      const segmentName = text
        .split('\n')
        .find((l) => l.trim().endsWith('.ts'))!
        .trim();
      const segment = await fetch(new URL(segmentName, session.playlistUrl));
      expect(segment.status).toBe(200);
      expect(segment.headers.get('content-type')).toBe('video/mp2t');
      expect(segment.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const file = join(scratch, 'segment.ts');
      writeFileSync(file, Buffer.from(await segment.arrayBuffer()));
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name', '-of', 'json', file]);
      const streams = (JSON.parse(stdout) as { streams: { codec_type: string; codec_name: string }[] }).streams;
      expect(streams).toEqual(expect.arrayContaining([expect.objectContaining({ codec_type: 'video', codec_name: 'h264' })]));

      const live = await waitFor('the session to be live', async () => {
        const s = (await client.get<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body;
        return s.status === 'live' ? s : undefined;
      });
      expect(live.id).toBe(session.id);
      expect((await client.get<{ items: { quota: string; used: number }[] }>(`/v1/apps/${app.id}/usage`)).body.items).toEqual(
        expect.arrayContaining([{ quota: 'maxRecordings', used: 1, limit: expect.any(Number) as number }]),
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

  it('refuses HLS over the recordings quota, and stops it when the stream ends', { timeout: 300_000 }, async () => {
    const { app, client } = await createTenant(harness.admin, 'small');
    const stream = await publishingStream(client, app.id);
    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxRecordings: 0 } });
    const refused = await waitFor('a refusal', async () => {
      const r = await client.post<LimitRefusal>(`/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
      return r.status === 409 ? undefined : r;
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.recordings', limit: 0 });

    await harness.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxRecordings: null } });
    const session = await startHls(client, app.id, stream.id);
    await playlistOf(session.playlistUrl, client, session);
    expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBe(200);

    const stopped = await waitFor('the session to stop with the stream', async () => {
      const s = (await client.get<HlsView>(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).body;
      return s.status === 'stopped' ? s : undefined;
    });
    expect(stopped.stoppedAt).not.toBeNull();
    await waitFor(
      'the segments to be deleted',
      async () => ((await fetch(session.playlistUrl)).status === 404 ? true : undefined),
      (RETENTION_S + 15) * 1000,
    );
  });
});
