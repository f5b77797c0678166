import { describe, expect, it } from 'vitest';
import { planLadder } from './ladder.js';

describe(planLadder.name, () => {
  it('gives a 1080p source the whole ladder, keeping the aspect ratio', () => {
    expect(planLadder({ width: 1920, height: 1080 })).toEqual([
      { name: '1080p', width: 1920, height: 1080, bitrateKbps: 5_000 },
      { name: '720p', width: 1280, height: 720, bitrateKbps: 2_800 },
      { name: '480p', width: 854, height: 480, bitrateKbps: 1_400 },
      { name: '360p', width: 640, height: 360, bitrateKbps: 800 },
    ]);
  });

  it('never upscales: a 720p source stops at 720p', () => {
    expect(planLadder({ width: 1280, height: 720 }).map((r) => r.name)).toEqual(['720p', '480p', '360p']);
  });

  it('gives a source below the lowest rung one rendition at its own size', () => {
    const [only, ...rest] = planLadder({ width: 427, height: 240 });
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ name: '240p', width: 428, height: 240 });
    expect(only?.bitrateKbps).toBeLessThan(800);
  });

  it('keeps every dimension even for 4:2:0 H.264', () => {
    for (const r of planLadder({ width: 1000, height: 750 })) {
      expect(r.width % 2).toBe(0);
      expect(r.height % 2).toBe(0);
    }
  });

  it('refuses a source without a video size', () => {
    expect(() => planLadder({ width: 0, height: 0 })).toThrow(RangeError);
  });
});
