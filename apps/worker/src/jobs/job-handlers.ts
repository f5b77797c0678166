import { JOBS, type JobKey, type QueueName } from '@tally/contracts';

export type JobHandler = (payload: unknown) => Promise<unknown>;
export type QueueJobKey<Q extends QueueName> = { [K in JobKey]: (typeof JOBS)[K]['queue'] extends Q ? K : never }[JobKey];
export type JobHandlers<Q extends QueueName> = Readonly<Record<QueueJobKey<Q>, JobHandler>>;

/** Startup fails when a job declared on the queue has no handler, instead of the job failing at 3 a.m. */
export function assertEveryJobHandled<Q extends QueueName>(
  queue: Q,
  handlers: Partial<Record<string, JobHandler>>,
): asserts handlers is JobHandlers<Q> {
  const missing = (Object.keys(JOBS) as JobKey[]).filter((key) => JOBS[key].queue === queue && typeof handlers[key] !== 'function');
  if (missing.length > 0) throw new Error(`no handler for job(s) of ${queue}: ${missing.join(', ')}`);
}

export function jobKeyByName(queue: string, name: string): JobKey | undefined {
  return (Object.keys(JOBS) as JobKey[]).find((key) => JOBS[key].queue === queue && JOBS[key].name === name);
}

/** The handler of a job taken from `queue`; an unknown name fails the job. */
export function handlerFor<Q extends QueueName>(queue: Q, handlers: JobHandlers<Q>, name: string): JobHandler {
  const key = jobKeyByName(queue, name);
  const handler = key === undefined ? undefined : (handlers as Partial<Record<string, JobHandler>>)[key];
  if (!handler) throw new Error(`unknown job ${name} on ${queue}`);
  return handler;
}
