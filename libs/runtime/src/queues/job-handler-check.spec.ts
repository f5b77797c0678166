import 'reflect-metadata';
import { JOBS, type JobKey, type JobPayload, QUEUES } from '@tally/contracts';
import { describe, expect, it } from 'vitest';
import { assertOneHandlerPerJob, JobHandlerError } from './job-handler-check.js';
import { type FoundHandler, HandlesJob, jobHandlersOf, runJob } from './handles-job.js';

const done = () => Promise.resolve();
const workerJobs = (Object.keys(JOBS) as JobKey[]).filter((key) => JOBS[key].consumer === 'worker');
const handler = (job: JobKey, owner = 'Owner'): FoundHandler => ({ job, owner, method: job, consumes: JOBS[job].queue });
const complete = workerJobs.map((job) => handler(job));

describe(assertOneHandlerPerJob.name, () => {
  it('accepts exactly one handler per worker job, on the class consuming its queue', () => {
    expect(() => assertOneHandlerPerJob('worker', complete)).not.toThrow();
  });

  it('refuses to start when a job has no handler, naming the job and its queue', () => {
    const sut = () =>
      assertOneHandlerPerJob(
        'worker',
        complete.filter((h) => h.job !== 'workerExited'),
      );
    expect(sut).toThrow(JobHandlerError);
    expect(sut).toThrow('job worker.exited (tally-node-report) has no handler');
  });

  it('refuses to start when a job has two handlers, naming both', () => {
    const sut = () => assertOneHandlerPerJob('worker', [...complete, handler('finaliseRecording', 'Other')]);
    expect(sut).toThrow('job recording.finalise (tally-recordings) has 2 handlers: Other.finaliseRecording, Owner.finaliseRecording');
  });

  it('refuses a handler on a class that consumes another queue, where it would never run', () => {
    const misplaced = complete.map((h) => (h.job === 'sweepLadders' ? { ...h, consumes: QUEUES.maintenance } : h));
    expect(() => assertOneHandlerPerJob('worker', misplaced)).toThrow(
      'job ladders.sweep (tally-transcodes) is handled by Owner.sweepLadders, which consumes tally-maintenance',
    );
  });

  it('refuses a worker handler for a job the agent consumes', () => {
    expect(() => assertOneHandlerPerJob('worker', [...complete, handler('runLadder')])).toThrow(/job ladder\.run is the agent's/);
  });

  it('lists every problem at once', () => {
    expect(() => assertOneHandlerPerJob('worker', [])).toThrow(
      new RegExp(workerJobs.map((k) => JOBS[k].name.replace('.', '\\.')).join('.*')),
    );
  });
});

class Recordings {
  readonly consumes = QUEUES.recordings;
  readonly finalised: string[] = [];

  @HandlesJob('finaliseRecording')
  finalise({ recordingId }: JobPayload<'finaliseRecording'>): Promise<string> {
    this.finalised.push(recordingId);
    return Promise.resolve(`finalised ${recordingId}`);
  }

  other(): Promise<void> {
    return done();
  }
}

describe(runJob.name, () => {
  it('runs the decorated method for the job name, with the payload its schema parsed', async () => {
    const sut = new Recordings();
    await expect(runJob(sut, { name: 'recording.finalise', data: { recordingId: 'rec_1', extra: true } })).resolves.toBe('finalised rec_1');
    expect(sut.finalised).toEqual(['rec_1']);
  });

  it('fails a job whose payload breaks its schema, without calling the handler', async () => {
    const sut = new Recordings();
    await expect(runJob(sut, { name: 'recording.finalise', data: { recording: 'rec_1' } })).rejects.toThrow(/recordingId/);
    expect(sut.finalised).toEqual([]);
  });

  it('fails a job this consumer has no handler for, naming it', async () => {
    await expect(runJob(new Recordings(), { name: 'ladder.report', data: {} })).rejects.toThrow(
      'unknown job ladder.report on tally-recordings',
    );
  });
});

describe(jobHandlersOf.name, () => {
  it('finds decorated methods only, with the queue their class consumes', () => {
    expect(jobHandlersOf(new Recordings())).toEqual([
      { job: 'finaliseRecording', owner: 'Recordings', method: 'finalise', consumes: QUEUES.recordings },
    ]);
  });
});
