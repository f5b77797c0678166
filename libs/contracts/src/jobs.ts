import { z } from 'zod';

/** Every queue and job name in one place; the worker refuses to start if one has no handler. */
export const QUEUES = { maintenance: 'tally-maintenance' } as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const JOBS = {
  reconcileStreams: { queue: QUEUES.maintenance, name: 'streams.reconcile', payload: z.object({}) },
} as const;
export type JobKey = keyof typeof JOBS;
