import { type JobConsumer, JOBS, type JobKey } from '@tally/contracts';
import type { FoundHandler } from './handles-job.js';

export class JobHandlerError extends Error {}

/**
 * Every job `consumer` runs has exactly one handler, on a class consuming the job's queue; no
 * handler serves another process's job. Throws naming every offending job.
 */
export function assertOneHandlerPerJob(consumer: JobConsumer, handlers: readonly FoundHandler[]): void {
  const problems: string[] = [];
  const where = (h: FoundHandler) => `${h.owner}.${h.method}`;
  const all = (list: readonly FoundHandler[]) => list.map(where).sort().join(', ');
  for (const key of Object.keys(JOBS) as JobKey[]) {
    const { name, queue } = JOBS[key];
    const own = handlers.filter((h) => h.job === key);
    if (JOBS[key].consumer !== consumer) {
      if (own.length > 0) problems.push(`job ${name} is the ${JOBS[key].consumer}'s, yet handled by ${all(own)}`);
      continue;
    }
    if (own.length === 0) problems.push(`job ${name} (${queue}) has no handler`);
    if (own.length > 1) problems.push(`job ${name} (${queue}) has ${own.length} handlers: ${all(own)}`);
    for (const h of own.filter((h) => h.consumes !== queue)) {
      problems.push(`job ${name} (${queue}) is handled by ${where(h)}, which consumes ${h.consumes ?? 'no queue'}`);
    }
  }
  if (problems.length > 0) throw new JobHandlerError(`job handlers are not one per job: ${problems.join('; ')}`);
}
