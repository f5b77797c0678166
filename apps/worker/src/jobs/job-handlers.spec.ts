import { QUEUES } from '@tally/contracts';
import { describe, expect, it } from 'vitest';
import { assertEveryJobHandled, jobKeyByName } from './job-handlers.js';

describe(assertEveryJobHandled.name, () => {
  it('refuses a handler map that misses a job declared on the queue', () => {
    expect(() => assertEveryJobHandled(QUEUES.maintenance, { reconcileStreams: () => Promise.resolve() })).toThrow(
      /no handler for job\(s\) of tally-maintenance: workerExited/,
    );
  });

  it('accepts a map complete for its queue, whatever other queues declare', () => {
    const done = () => Promise.resolve();
    expect(() => assertEveryJobHandled(QUEUES.maintenance, { reconcileStreams: done, workerExited: done })).not.toThrow();
  });
});

describe(jobKeyByName.name, () => {
  it('finds a job by queue and name only', () => {
    expect(jobKeyByName('tally-maintenance', 'streams.reconcile')).toBe('reconcileStreams');
    expect(jobKeyByName('other', 'streams.reconcile')).toBeUndefined();
  });
});
