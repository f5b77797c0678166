import { JOBS, type JobKey, type JobPayload, type QueueName } from '@tally/contracts';
import { UnrecoverableError } from 'bullmq';

const HANDLES_JOB = 'tally:handles-job';

export type JobMethod<K extends JobKey> = (payload: JobPayload<K>, ...rest: never[]) => Promise<unknown>;

/** A class that consumes one queue (or one family of queues): its `@HandlesJob` methods must be jobs of that queue. */
export type JobConsumerHost = { readonly consumes: QueueName };

/**
 * Marks the method that runs a job from the registry (libs/contracts/src/jobs.ts). The worker checks
 * at boot that each of its jobs has exactly one such method, on a class consuming the job's queue.
 */
export function HandlesJob<K extends JobKey>(key: K) {
  return <M extends JobMethod<K>>(_target: JobConsumerHost, _property: string | symbol, descriptor: TypedPropertyDescriptor<M>): void => {
    Reflect.defineMetadata(HANDLES_JOB, key, descriptor.value as object);
  };
}

export type FoundHandler = Readonly<{ job: JobKey; owner: string; method: string; consumes: QueueName | undefined }>;

/** The `@HandlesJob` methods of an instance. */
export function jobHandlersOf(instance: object): FoundHandler[] {
  const found: FoundHandler[] = [];
  const consumes = (instance as Partial<JobConsumerHost>).consumes;
  for (const [method, fn] of methodsOf(instance)) {
    const job = Reflect.getMetadata(HANDLES_JOB, fn) as JobKey | undefined;
    if (job !== undefined) found.push({ job, owner: instance.constructor.name, method, consumes });
  }
  return found;
}

/**
 * Runs a job on the instance's `@HandlesJob` method for its name, with the payload parsed by the
 * job's schema. A job this consumer has no handler for fails without retries.
 */
export async function runJob(consumer: JobConsumerHost, job: Readonly<{ name: string; data: unknown }>): Promise<unknown> {
  const handler = handlersByName(consumer).get(job.name);
  if (!handler) throw new UnrecoverableError(`unknown job ${job.name} on ${consumer.consumes}`);
  const method = (consumer as unknown as Record<string, (payload: unknown) => Promise<unknown>>)[handler.method];
  return method!.call(consumer, JOBS[handler.job].payload.parse(job.data));
}

/**
 * The consumer's handlers by job name, found once per instance: a busy queue runs thousands of jobs
 * a second, and walking the prototype chain's descriptors for each was a visible part of a
 * webhook delivery's CPU.
 */
const handlerCache = new WeakMap<object, ReadonlyMap<string, FoundHandler>>();

function handlersByName(consumer: JobConsumerHost): ReadonlyMap<string, FoundHandler> {
  let byName = handlerCache.get(consumer);
  if (!byName) {
    byName = new Map(jobHandlersOf(consumer).map((h) => [JOBS[h.job].name, h]));
    handlerCache.set(consumer, byName);
  }
  return byName;
}

/** Methods along the prototype chain, read from their descriptors (never through getters, which may throw). */
function methodsOf(instance: object): Map<string, object> {
  const methods = new Map<string, object>();
  for (
    let proto = Object.getPrototypeOf(instance) as object | null;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (name !== 'constructor' && !methods.has(name) && typeof descriptor.value === 'function')
        methods.set(name, descriptor.value as object);
    }
  }
  return methods;
}
