import { describe, expect, it } from 'vitest';
import { backoffDelayMs, retrySchedule, retrySpanMs } from './backoff.js';

const HOUR = 3_600_000;
/** TALLY_WEBHOOK_* defaults in libs/config. */
const DEFAULTS = { maxAttempts: 20, backoffMs: 10_000, maxBackoffMs: 6 * HOUR };

describe(backoffDelayMs.name, () => {
  it('doubles from backoffMs after each failed attempt', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, { backoffMs: 1_000, maxBackoffMs: 60_000 }))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('stops growing at maxBackoffMs, even for absurd attempt numbers', () => {
    const policy = { backoffMs: 1_000, maxBackoffMs: 5_000 };

    expect(backoffDelayMs(4, policy)).toBe(5_000);
    expect(backoffDelayMs(5_000, policy)).toBe(5_000);
  });
});

describe(retrySchedule.name, () => {
  it('with the defaults, keeps trying for more than a day before a delivery is dead', () => {
    const schedule = retrySchedule(DEFAULTS);

    expect(schedule).toHaveLength(19);
    expect(schedule.slice(0, 3)).toEqual([10_000, 20_000, 40_000]);
    expect(schedule.at(-1)).toBe(6 * HOUR);
    expect(retrySpanMs(DEFAULTS)).toBeGreaterThan(24 * HOUR);
    expect(Math.round(retrySpanMs(DEFAULTS) / HOUR)).toBe(53);
  });

  it('has no wait for a single attempt', () => {
    expect(retrySchedule({ ...DEFAULTS, maxAttempts: 1 })).toEqual([]);
  });
});
