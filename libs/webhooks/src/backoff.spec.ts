import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_MS, retryDelayMs, retrySpanMs } from './backoff.js';

const HOUR = 3_600_000;

describe(retryDelayMs.name, () => {
  it('follows the schedule, spread by at most ±20 %', () => {
    const schedule = [1_000, 60_000];

    expect(retryDelayMs(1, schedule, () => 0.5)).toBe(1_000);
    expect(retryDelayMs(1, schedule, () => 0)).toBe(800);
    expect(retryDelayMs(1, schedule, () => 0.999_999)).toBe(1_200);
    expect(retryDelayMs(2, schedule, () => 0.5)).toBe(60_000);
  });

  it('is null after the last attempt: the delivery is dead', () => {
    expect(retryDelayMs(3, [1_000, 2_000])).toBeNull();
    expect(retryDelayMs(1, [])).toBeNull();
  });

  it('spreads deliveries that failed together', () => {
    const waits = new Set(Array.from({ length: 50 }, () => retryDelayMs(2, DEFAULT_RETRY_SCHEDULE_MS)));

    expect(waits.size).toBeGreaterThan(40);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(240_000);
  });
});

describe(retrySpanMs.name, () => {
  it('with the default schedule, 8 attempts spread over about a day', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toHaveLength(7);
    expect(retrySpanMs(DEFAULT_RETRY_SCHEDULE_MS) / HOUR).toBeCloseTo(27.6, 1);
  });
});
