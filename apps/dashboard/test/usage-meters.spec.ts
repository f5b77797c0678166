import { describe, expect, it } from 'vitest';
import { formatUsage, lastDays } from '../src/usage-meters.js';

describe(lastDays.name, () => {
  it('covers 30 whole UTC days ending with today', () => {
    const sut = lastDays(new Date('2026-11-29T05:20:00Z'));
    expect(sut).toEqual({ from: '2026-10-31T00:00:00.000Z', to: '2026-11-30T00:00:00.000Z' });
  });
});

describe(formatUsage.name, () => {
  it('shows minutes with one decimal and GB-hours and GB with three', () => {
    expect(formatUsage(1234.56, 'minutes')).toBe('1,234.6');
    expect(formatUsage(0.0004, 'GB-hours')).toBe('0.000');
    expect(formatUsage(0.0123456, 'GB')).toBe('0.012');
  });
});
