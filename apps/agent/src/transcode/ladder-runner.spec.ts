import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LadderRun } from '@tally/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Ffmpeg } from './ffmpeg.js';
import { runLadder } from './ladder-runner.js';

// A stand-in for ffmpeg that records what it was asked to read and writes a rendition file.
function fakeFfmpeg(probed: string[]): Ffmpeg {
  return {
    probe: (path) => {
      probed.push(path);
      return Promise.resolve({ width: 640, height: 360, hasAudio: false });
    },
    run: (args) => {
      const playlist = args.at(-1) ?? '';
      writeFileSync(playlist, '#EXTM3U\n');
      return Promise.resolve();
    },
    support: () => Promise.resolve({ nvenc: false, scaleCuda: false }),
  };
}

describe(runLadder.name, () => {
  let outside: string;
  let recordings: string;
  let probed: string[];
  const job = (source: string, ladderDir: string): LadderRun => ({
    recordingId: 'rec_1',
    appId: 'app_1',
    attempt: 1,
    encoder: 'x264',
    source,
    ladderDir,
  });

  beforeEach(() => {
    outside = mkdtempSync(join(tmpdir(), 'tally-ladder-escape-'));
    recordings = join(outside, 'recordings');
    mkdirSync(join(recordings, 'app_1'), { recursive: true });
    writeFileSync(join(recordings, 'app_1', 'rec_1.mp4'), 'video');
    // What an escaping job would destroy: a database directory next to the recordings.
    mkdirSync(join(outside, 'postgres.ladder'));
    writeFileSync(join(outside, 'postgres.ladder', 'PG_VERSION'), '15');
    probed = [];
  });
  afterEach(() => rmSync(outside, { recursive: true, force: true }));

  const databaseIntact = () => readFileSync(join(outside, 'postgres.ladder', 'PG_VERSION'), 'utf8') === '15';

  it('writes the ladder inside the recordings directory', async () => {
    await runLadder(job('app_1/rec_1.mp4', 'app_1/rec_1.ladder'), recordings, fakeFfmpeg(probed));
    expect(existsSync(join(recordings, 'app_1', 'rec_1.ladder', 'master.m3u8'))).toBe(true);
    expect(probed).toEqual([join(recordings, 'app_1', 'rec_1.mp4')]);
  });

  it.each([
    ['a ../ ladder directory', 'app_1/rec_1.mp4', '../postgres.ladder'],
    ['a nested ../ ladder directory', 'app_1/rec_1.mp4', 'app_1/../../postgres.ladder'],
    ['an absolute ladder directory', 'app_1/rec_1.mp4', '/tmp/x.ladder'],
    ['a ../ source', '../postgres.ladder/PG_VERSION', 'app_1/rec_1.ladder'],
    ['an absolute source', '/etc/passwd', 'app_1/rec_1.ladder'],
    ['a directory that is not a ladder', 'app_1/rec_1.mp4', 'app_1'],
  ])('refuses %s and touches nothing', async (_what, source, ladderDir) => {
    await expect(runLadder(job(source, ladderDir), recordings, fakeFfmpeg(probed))).rejects.toThrow(
      /not a path inside|not a \.ladder directory/,
    );
    expect(probed).toEqual([]);
    expect(databaseIntact()).toBe(true);
  });

  it('refuses an absolute ladder directory that exists', async () => {
    await expect(runLadder(job('app_1/rec_1.mp4', join(outside, 'postgres.ladder')), recordings, fakeFfmpeg(probed))).rejects.toThrow(
      /not a path inside/,
    );
    expect(databaseIntact()).toBe(true);
  });

  it('refuses to follow a symlink out of the recordings directory', async () => {
    symlinkSync(outside, join(recordings, 'app_2'));
    await expect(runLadder(job('app_1/rec_1.mp4', 'app_2/postgres.ladder'), recordings, fakeFfmpeg(probed))).rejects.toThrow(
      /not a path inside/,
    );
    await expect(runLadder(job('app_2/postgres.ladder/PG_VERSION', 'app_1/rec_1.ladder'), recordings, fakeFfmpeg(probed))).rejects.toThrow(
      /not a path inside/,
    );
    expect(probed).toEqual([]);
    expect(databaseIntact()).toBe(true);
  });

  it('replaces a symlinked ladder directory with a real one instead of writing through it', async () => {
    symlinkSync(join(outside, 'postgres.ladder'), join(recordings, 'app_1', 'rec_1.ladder'));
    await runLadder(job('app_1/rec_1.mp4', 'app_1/rec_1.ladder'), recordings, fakeFfmpeg(probed));
    expect(existsSync(join(recordings, 'app_1', 'rec_1.ladder', 'master.m3u8'))).toBe(true);
    expect(databaseIntact()).toBe(true);
  });
});
