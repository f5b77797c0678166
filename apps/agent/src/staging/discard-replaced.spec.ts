import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JOBS } from '@tally/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { discardReplaced } from './staging-worker.js';

describe('discardReplaced', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('deletes the files of replaced attempts on the node, and only those', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tally-discard-'));
    const app = join(dir, '.incoming', 'app_a');
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'rec_1.video.webm'), '');
    writeFileSync(join(app, 'rec_1.video-1.webm'), 'x');
    writeFileSync(join(app, 'rec_1.audio.webm'), 'kept');
    const lines: string[] = [];
    await discardReplaced(dir, ['app_a/rec_1.video.webm', 'app_a/rec_1.video-1.webm', 'app_a/rec_1.audio-1.webm'], (l) => lines.push(l));
    expect(existsSync(join(app, 'rec_1.video.webm'))).toBe(false);
    expect(existsSync(join(app, 'rec_1.video-1.webm'))).toBe(false);
    expect(existsSync(join(app, 'rec_1.audio.webm'))).toBe(true);
    expect(lines).toEqual([
      "deleted app_a/rec_1.video.webm (a replaced attempt's file)",
      "deleted app_a/rec_1.video-1.webm (a replaced attempt's file)",
    ]);
  });

  it('is asked for by the staging job, which an agent of an earlier version still reads', () => {
    const request = { recordingId: 'rec_1', locations: ['app_a/rec_1.video-2.webm'] };
    expect(JOBS.stageRecording.payload.parse(request).discard).toEqual([]);
    expect(() => JOBS.stageRecording.payload.parse({ ...request, discard: ['../etc/passwd'] })).toThrow(/location/);
    expect(() => JOBS.stageRecording.payload.parse({ ...request, discard: ['app_a/.hidden'] })).toThrow(/location/);
  });
});
