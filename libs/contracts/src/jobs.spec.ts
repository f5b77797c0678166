import { describe, expect, it } from 'vitest';
import { JOBS, QUEUES, STATIC_QUEUES, transcodeQueueOf } from './jobs.js';

describe('JOBS', () => {
  it('gives every job its own name, so a job is found by name alone', () => {
    const names = Object.values(JOBS).map((job) => job.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('builds per-node queue names inside their family, never as a fixed queue', () => {
    expect(transcodeQueueOf('node-a')).toBe('tally-transcode-node.node-a');
    expect(STATIC_QUEUES).not.toContain(QUEUES.transcodeNode);
  });
});
