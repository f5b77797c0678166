import { z } from 'zod';
import { WorkerExitReport } from './workers.js';

/** Every queue and job name in one place; the worker refuses to start if one has no handler. */
export const QUEUES = { maintenance: 'tally-maintenance', webhooks: 'tally-webhooks', recordings: 'tally-recordings' } as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const JOBS = {
  reconcileStreams: { queue: QUEUES.maintenance, name: 'streams.reconcile', payload: z.object({}) },
  /** A node's media worker ended on its own: what ran on it failed (job id = node, kind, worker and time). */
  workerExited: { queue: QUEUES.maintenance, name: 'worker.exited', payload: WorkerExitReport },
  /** Sends one webhook delivery (job id = delivery id, so a delivery is queued at most once). */
  deliverWebhook: { queue: QUEUES.webhooks, name: 'webhook.deliver', payload: z.object({ deliveryId: z.string() }) },
  /** Probes, checksums and moves a finished egress file into place (job id = recording id). */
  finaliseRecording: { queue: QUEUES.recordings, name: 'recording.finalise', payload: z.object({ recordingId: z.string() }) },
} as const;
export type JobKey = keyof typeof JOBS;
