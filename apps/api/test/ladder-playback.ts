import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RecordingView } from '@tally/contracts';
import type { ApiClient } from '@tally/testing';
import { expect } from 'vitest';

const run = promisify(execFile);

export type Ladder = NonNullable<RecordingView['ladder']>;
export type VideoProbe = { width: number; height: number; durationS: number; streams: string[] };

/** ffprobe's view of a media file or playlist: the video size, the duration and the stream types. */
export async function probeVideo(path: string): Promise<VideoProbe> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration:stream=codec_type,width,height',
    '-of',
    'json',
    path,
  ]);
  const parsed = JSON.parse(stdout) as {
    format: { duration: string };
    streams: { codec_type: string; width?: number; height?: number }[];
  };
  const video = parsed.streams.find((s) => s.codec_type === 'video');
  return {
    width: video?.width ?? 0,
    height: video?.height ?? 0,
    durationS: Number(parsed.format.duration),
    streams: parsed.streams.map((s) => s.codec_type).sort(),
  };
}

/** Fetches the master playlist, each rendition's playlist and every segment through the API, as a player would. */
export async function downloadLadder(client: ApiClient, recording: RecordingView): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `ladder-${recording.id}-`));
  const base = `/v1/apps/${recording.appId}/recordings/${recording.id}/ladder`;
  const fetchTo = async (file: string, contentType: string): Promise<string> => {
    const response = await client.raw(`${base}/${file}`);
    expect(response.status, file).toBe(200);
    expect(response.headers.get('content-type')).toBe(contentType);
    const body = Buffer.from(await response.arrayBuffer());
    writeFileSync(join(dir, file), body);
    return body.toString('utf8');
  };
  const master = await fetchTo('master.m3u8', 'application/vnd.apple.mpegurl');
  for (const playlist of master.split('\n').filter((l) => l.endsWith('.m3u8'))) {
    const text = await fetchTo(playlist, 'application/vnd.apple.mpegurl');
    for (const segment of text.split('\n').filter((l) => l.endsWith('.ts'))) await fetchTo(segment, 'video/mp2t');
  }
  return dir;
}

/** Every rendition plays end to end at its advertised size, and the master playlist lists exactly them. */
export async function expectLadderPlays(client: ApiClient, recording: RecordingView, ladder: Ladder): Promise<void> {
  const dir = await downloadLadder(client, recording);
  const master = readFileSync(join(dir, 'master.m3u8'), 'utf8');
  expect(master.split('\n').filter((l) => l.endsWith('.m3u8'))).toEqual(ladder.renditions.map((r) => r.playlist));
  for (const rendition of ladder.renditions) {
    expect(master).toContain(`RESOLUTION=${rendition.width}x${rendition.height}`);
    const played = await probeVideo(join(dir, rendition.playlist));
    expect(played).toMatchObject({ width: rendition.width, height: rendition.height, streams: ['audio', 'video'] });
    expect(Math.abs(played.durationS - (recording.durationS ?? 0))).toBeLessThan(2);
  }
  // ffprobe opens the master playlist as a player does and finds every variant.
  const variants = await run('ffprobe', ['-v', 'error', '-show_entries', 'program=program_id', '-of', 'json', join(dir, 'master.m3u8')]);
  expect((JSON.parse(variants.stdout) as { programs: unknown[] }).programs).toHaveLength(ladder.renditions.length);
}
