import { JOBS, type JobKey } from '@tally/contracts';

export type JobHandler = (payload: unknown) => Promise<unknown>;
export type JobHandlers = Readonly<Record<JobKey, JobHandler>>;

/** Startup fails when a declared job has no handler, instead of the job failing at 3 a.m. */
export function assertEveryJobHandled(handlers: Partial<Record<string, JobHandler>>): asserts handlers is JobHandlers {
  const missing = (Object.keys(JOBS) as JobKey[]).filter((key) => typeof handlers[key] !== 'function');
  if (missing.length > 0) throw new Error(`no handler for job(s): ${missing.join(', ')}`);
}

export function jobKeyByName(queue: string, name: string): JobKey | undefined {
  return (Object.keys(JOBS) as JobKey[]).find((key) => JOBS[key].queue === queue && JOBS[key].name === name);
}
