import { describe, expect, it } from 'vitest';
import { parseLkSummary } from './lk-summary.js';

describe(parseLkSummary.name, () => {
  it('reads the subscribed tracks and total bitrate', () => {
    const out = `│ Sub 99  │ 10/10     │ 99.6kbps               │ 0 (0%)          │ -     │
│ Total   │ 1000/1000 │ 6.0mbps (59.6kbps avg) │ 0 (0%)          │ 0     │`;
    expect(parseLkSummary(out)).toEqual({ subscribed: 1000, expected: 1000, bitrate: '6.0mbps' });
  });

  it('shows when subscribers received nothing', () => {
    const out = `│ Total  │ 0/4    │ NaNmbps (NaNmbps avg) │  -              │ 0     │`;
    expect(parseLkSummary(out)).toEqual({ subscribed: 0, expected: 4, bitrate: 'NaNmbps' });
  });

  it('is undefined when lk printed no summary', () => {
    expect(parseLkSummary('failed to connect')).toBeUndefined();
  });
});
