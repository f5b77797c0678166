import { describe, expect, it } from 'vitest';
import { parseRange } from './recording-file.service.js';

describe(parseRange.name, () => {
  it('reads the range forms players send', () => {
    expect(parseRange('bytes=0-99', 1000)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=900-', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-100', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=990-5000', 1000)).toEqual({ start: 990, end: 999 });
  });

  it('answers a range past the end as unsatisfiable and anything else with the whole file', () => {
    expect(parseRange('bytes=1000-', 1000)).toBe('unsatisfiable');
    expect(parseRange('bytes=5-2', 1000)).toBe('unsatisfiable');
    expect(parseRange(undefined, 1000)).toBeUndefined();
    expect(parseRange('bytes=0-1,5-6', 1000)).toBeUndefined();
    expect(parseRange('items=0-1', 1000)).toBeUndefined();
  });
});
