import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trimToLastFragment } from './fragmented-mp4.js';

function box(type: string, payloadBytes: number): Buffer {
  const b = Buffer.alloc(8 + payloadBytes, 7);
  b.writeUInt32BE(8 + payloadBytes, 0);
  b.write(type, 4, 'latin1');
  return b;
}

function fileOf(...parts: Buffer[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tally-fmp4-')), 'part.mp4');
  writeFileSync(path, Buffer.concat(parts));
  return path;
}

const head = [box('ftyp', 24), box('moov', 200)];
const fragment = [box('moof', 40), box('mdat', 1000)];

describe('trimToLastFragment', () => {
  it('cuts a fragment whose media data was cut short, keeping the whole ones before it', async () => {
    const whole = Buffer.concat([...head, ...fragment, ...fragment]);
    const path = fileOf(whole, box('moof', 40), box('mdat', 1000).subarray(0, 300));
    expect(await trimToLastFragment(path)).toEqual({ fragmented: true, wholeFragments: 2, trimmedBytes: 48 + 300 });
    expect(readFileSync(path).equals(whole)).toBe(true);
  });

  it('cuts a fragment header written without its media data, and a box header cut in half', async () => {
    const whole = Buffer.concat([...head, ...fragment]);
    const path = fileOf(whole, box('moof', 40), Buffer.from([0, 0]));
    expect(await trimToLastFragment(path)).toEqual({ fragmented: true, wholeFragments: 1, trimmedBytes: 50 });
    expect(readFileSync(path).equals(whole)).toBe(true);
  });

  it('reports a fragmented file with no whole fragment, so it is named unreadable', async () => {
    const path = fileOf(...head, box('moof', 40), box('mdat', 1000).subarray(0, 100));
    expect(await trimToLastFragment(path)).toMatchObject({ fragmented: true, wholeFragments: 0 });
  });

  it('leaves a complete fragmented file and an MP4 that is not fragmented as they are', async () => {
    const complete = Buffer.concat([...head, ...fragment, box('mfra', 16)]);
    const path = fileOf(complete);
    expect(await trimToLastFragment(path)).toEqual({ fragmented: true, wholeFragments: 1, trimmedBytes: 0 });
    expect(readFileSync(path).equals(complete)).toBe(true);

    // mp4mux's plain MP4 killed before its index: the media data runs to the end, nothing to cut.
    const plain = Buffer.concat([box('ftyp', 24), box('mdat', 5000).subarray(0, 2000)]);
    const plainPath = fileOf(plain);
    expect(await trimToLastFragment(plainPath)).toEqual({ fragmented: false, wholeFragments: 0, trimmedBytes: 0 });
    expect(readFileSync(plainPath).equals(plain)).toBe(true);
  });
});
