import { describe, expect, it } from 'vitest';
import { decodeClock, encodeClock } from './clock.js';

describe(decodeClock.name, () => {
  it('reads back the timestamp a frame was drawn at', () => {
    const drawn = 1_795_378_250_665;
    expect(decodeClock(encodeClock(drawn), drawn + 42)).toBe(drawn);
  });

  it('rejects a frame whose blocks were misread', () => {
    const bits = encodeClock(1_795_378_250_665);
    bits[5] = bits[5] === 1 ? 0 : 1;
    expect(decodeClock(bits, 1_795_378_250_700)).toBeUndefined();
  });

  it('restores the high bits across a wrap of the low 32', () => {
    const drawn = 2 ** 32 * 418 - 3;
    expect(decodeClock(encodeClock(drawn), drawn + 10)).toBe(drawn);
  });
});
