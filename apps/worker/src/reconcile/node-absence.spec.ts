import { describe, expect, it } from 'vitest';
import { absenceMeansGone, HEARTBEATS_RETURN_MS } from './node-absence.js';

describe(absenceMeansGone.name, () => {
  it('trusts absence from the pool unless the Redis connection came back less than the grace ago', () => {
    const now = 1_000_000;
    expect(absenceMeansGone(undefined, now)).toBe(true);
    expect(absenceMeansGone(now - 1_000, now)).toBe(false);
    expect(absenceMeansGone(now - HEARTBEATS_RETURN_MS + 1, now)).toBe(false);
    expect(absenceMeansGone(now - HEARTBEATS_RETURN_MS, now)).toBe(true);
  });
});
