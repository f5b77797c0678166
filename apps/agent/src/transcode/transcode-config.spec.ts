import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTranscodeConfig } from './transcode-config.js';

describe(loadTranscodeConfig.name, () => {
  it('reads recordings from the same directory as the API, under TALLY_HOME unless set', () => {
    expect(loadTranscodeConfig({})).toEqual({ recordingsDir: '/var/lib/tally/recordings', concurrency: 8 });
    expect(loadTranscodeConfig({ TALLY_HOME: '/srv/t' }).recordingsDir).toBe('/srv/t/recordings');
    expect(loadTranscodeConfig({ TALLY_RECORDINGS_DIR: '/mnt/rec', TALLY_TRANSCODE_CONCURRENCY: '2' })).toEqual({
      recordingsDir: '/mnt/rec',
      concurrency: 2,
    });
  });

  it('names an invalid variable', () => {
    expect(() => loadTranscodeConfig({ TALLY_TRANSCODE_CONCURRENCY: '0' })).toThrow(/TALLY_TRANSCODE_CONCURRENCY/);
  });

  it('is documented in .env.example', () => {
    const example = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', '.env.example'), 'utf8');
    for (const name of ['TALLY_HOME', 'TALLY_RECORDINGS_DIR', 'TALLY_TRANSCODE_CONCURRENCY'])
      expect(example).toMatch(new RegExp(`^${name}=`, 'm'));
  });
});
