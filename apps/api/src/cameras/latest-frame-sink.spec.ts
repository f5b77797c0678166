import { describe, expect, it } from 'vitest';
import { FrameRateLimiter, isJpeg } from './jpeg-frame.js';
import { LatestFrameSink } from './latest-frame-sink.js';

describe(LatestFrameSink.name, () => {
  it('keeps one frame in flight and hands a slow viewer only the newest frame once it drains', () => {
    const written: Buffer[] = [];
    const pending: ((error?: Error) => void)[] = [];
    const sut = new LatestFrameSink((frame, done) => {
      written.push(frame);
      pending.push(done);
    });
    const frames = [1, 2, 3, 4].map((n) => Buffer.from([n]));

    for (const frame of frames) sut.offer(frame);
    expect(written).toEqual([frames[0]]);
    pending.shift()?.();

    expect(written).toEqual([frames[0], frames[3]]);
    expect(written[1]).toBe(frames[3]);
    expect(sut.skipped).toBe(2);
  });

  it('stops writing after a failed write', () => {
    let calls = 0;
    let failed: Error | undefined;
    const sut = new LatestFrameSink(
      (_frame, done) => {
        calls += 1;
        done(new Error('reset'));
      },
      (error) => (failed = error),
    );
    sut.offer(Buffer.from([1]));
    sut.offer(Buffer.from([2]));
    expect(calls).toBe(1);
    expect(failed?.message).toBe('reset');
  });
});

describe(FrameRateLimiter.name, () => {
  it('lets maxFps frames through per second and drops the rest', () => {
    const sut = new FrameRateLimiter(8, 0);
    const passed = Array.from({ length: 40 }, (_, i) => sut.take(i * 25)).filter(Boolean).length;
    expect(passed).toBeGreaterThanOrEqual(15);
    expect(passed).toBeLessThanOrEqual(16);
  });
});

describe(isJpeg.name, () => {
  it('accepts SOI … EOI and nothing else', () => {
    expect(isJpeg(Buffer.from([0xff, 0xd8, 0x00, 0xff, 0xd9]))).toBe(true);
    expect(isJpeg(Buffer.from('not a jpeg'))).toBe(false);
    expect(isJpeg(Buffer.from([0xff, 0xd8, 0x00, 0x00]))).toBe(false);
  });
});
