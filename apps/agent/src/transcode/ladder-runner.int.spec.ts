import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LadderRun } from '@tally/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemFfmpeg } from './ffmpeg.js';
import { runLadder } from './ladder-runner.js';

const run = promisify(execFile);

describe(runLadder.name, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-ladder-runner-'));
  const job = (encoder: LadderRun['encoder']): LadderRun => ({
    recordingId: 'rec_0000000000000000',
    appId: 'app_0000000000000000',
    attempt: 1,
    encoder,
    source: 'app_0000000000000000/rec_0000000000000000.mp4',
    ladderDir: 'app_0000000000000000/rec_0000000000000000.ladder',
  });

  beforeAll(async () => {
    mkdirSync(join(dir, 'app_0000000000000000'));
    // A 3 s 854x480 source with a tone: the ladder is 480p and 360p, never 720p or 1080p.
    await run('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=854x480:rate=30:duration=3',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=3',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-shortest',
      join(dir, job('x264').source),
    ]);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('encodes each rendition with libx264 into HLS and writes the master playlist', async () => {
    const renditions = await runLadder(job('x264'), dir, systemFfmpeg());
    expect(renditions.map((r) => `${r.name} ${r.width}x${r.height}`)).toEqual(['480p 854x480', '360p 640x360']);
    const ladder = join(dir, job('x264').ladderDir);
    expect(readFileSync(join(ladder, 'master.m3u8'), 'utf8')).toContain('RESOLUTION=640x360');
    for (const r of renditions) {
      const { stdout } = await run('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'stream=codec_name,width,height',
        '-of',
        'json',
        join(ladder, `${r.name}.m3u8`),
      ]);
      const streams = (JSON.parse(stdout) as { streams: { codec_name: string; width?: number; height?: number }[] }).streams;
      expect(streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
      expect(streams.find((s) => s.codec_name === 'h264')).toMatchObject({ width: r.width, height: r.height });
    }
    expect(existsSync(`${ladder}.partial`)).toBe(false);
  }, 120_000);

  // Where an NVIDIA GPU exists the NVENC run succeeds instead (the e2e then covers it).
  it.skipIf(existsSync('/dev/nvidia0'))(
    'fails an NVENC run on a machine without an NVIDIA GPU and leaves no half-written ladder',
    async () => {
      const ladder = join(dir, job('nvenc').ladderDir);
      rmSync(ladder, { recursive: true, force: true });
      await expect(runLadder(job('nvenc'), dir, systemFfmpeg())).rejects.toThrow(/ffmpeg|h264_nvenc/);
      expect(existsSync(ladder)).toBe(false);
      expect(readdirSync(join(dir, 'app_0000000000000000'))).toEqual(['rec_0000000000000000.mp4']);
    },
    120_000,
  );
});
