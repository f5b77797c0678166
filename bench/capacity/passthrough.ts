import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RecordingView } from '@tally/contracts';
import { type ApiClient } from '@tally/testing';
import { createStream } from '@tally/testing';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { startRecordings, stopRecordings, streamLive, streamToken } from './media.js';

const run = promisify(execFile);

/** `count` single-publisher streams (rtc-node, VP8 video + Opus), one per passthrough recording. */
export async function passthroughRooms(
  client: ApiClient,
  appId: string,
  count: number,
  label = 'passthrough',
): Promise<{ streamIds: string[]; publishers: Publisher[] }> {
  const publishers: Publisher[] = [];
  const streamIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const stream = await createStream(client, appId, `capacity-${label}-${i}`);
    const token = await streamToken(client, appId, stream.id, `host-${i}`, 'publisher');
    publishers.push(await joinAndPublish(token.url, token.token));
    await streamLive(client, appId, stream.id);
    streamIds.push(stream.id);
  }
  return { streamIds, publishers };
}

/** One passthrough recording per stream, all at once. */
export async function startPassthrough(client: ApiClient, appId: string, streamIds: readonly string[]): Promise<RecordingView[]> {
  return (await Promise.all(streamIds.map((id) => startRecordings(client, appId, id, 'passthrough', 1)))).flat();
}

export type OutputCheck = Readonly<{
  id: string;
  ok: boolean;
  streams: string[];
  durationS: number;
  recordedS: number;
  /** Size of the joined file. */
  bytes: number;
  note: string;
}>;

/**
 * Stops the recordings and checks every joined file as a user would: it downloads, ffprobe finds a
 * video and an audio stream, and it lasts as long as the recording ran (±2 s).
 */
export async function stopAndCheck(client: ApiClient, appId: string, recordings: readonly RecordingView[]): Promise<OutputCheck[]> {
  const stoppedAt = Date.now();
  const done = await stopRecordings(client, appId, recordings);
  return Promise.all(
    done.map(async (r): Promise<OutputCheck> => {
      const recordedS = (stoppedAt - Date.parse(r.startedAt ?? '')) / 1000;
      if (r.status !== 'complete')
        return { id: r.id, ok: false, streams: [], durationS: 0, recordedS, bytes: 0, note: r.error ?? r.status };
      const response = await client.raw(`/v1/apps/${appId}/recordings/${r.id}/file`);
      const path = join(tmpdir(), `bench-${r.id}.${r.location.split('.').pop() ?? 'bin'}`);
      const file = Buffer.from(await response.arrayBuffer());
      writeFileSync(path, file);
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', path]);
      const parsed = JSON.parse(stdout) as { format: { duration?: string }; streams: { codec_type: string }[] };
      const streams = parsed.streams.map((s) => s.codec_type).sort();
      const durationS = Number(parsed.format.duration ?? 0);
      const ok = streams.join(',') === 'audio,video' && Math.abs(durationS - recordedS) <= 2;
      return { id: r.id, ok, streams, durationS, recordedS, bytes: file.length, note: r.error ?? '' };
    }),
  );
}
