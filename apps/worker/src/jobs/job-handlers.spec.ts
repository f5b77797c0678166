import { describe, expect, it } from 'vitest';
import { assertEveryJobHandled, jobKeyByName } from './job-handlers.js';

describe(assertEveryJobHandled.name, () => {
  it('refuses a handler map that misses a declared job', () => {
    expect(() => assertEveryJobHandled({})).toThrow(/no handler for job\(s\): reconcileStreams/);
  });

  it('accepts a complete map', () => {
    expect(() => assertEveryJobHandled({ reconcileStreams: () => Promise.resolve() })).not.toThrow();
  });
});

describe(jobKeyByName.name, () => {
  it('finds a job by queue and name only', () => {
    expect(jobKeyByName('tally-maintenance', 'streams.reconcile')).toBe('reconcileStreams');
    expect(jobKeyByName('other', 'streams.reconcile')).toBeUndefined();
  });
});
