/** A complete JPEG starts with SOI (FF D8) and ends with EOI (FF D9); anything else is not a frame. */
export function isJpeg(frame: Uint8Array): boolean {
  const n = frame.length;
  return n >= 4 && frame[0] === 0xff && frame[1] === 0xd8 && frame[n - 2] === 0xff && frame[n - 1] === 0xd9;
}

/**
 * The camera's fps cap as a token bucket: up to `maxFps` frames in any second, bursts included.
 * A frame without a token is dropped, so a camera sending too fast costs no more than its cap.
 */
export class FrameRateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly maxFps: number,
    now: number,
  ) {
    if (maxFps <= 0) throw new Error('maxFps must be positive');
    this.tokens = maxFps;
    this.last = now;
  }

  take(now: number): boolean {
    this.tokens = Math.min(this.maxFps, this.tokens + ((now - this.last) / 1000) * this.maxFps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
