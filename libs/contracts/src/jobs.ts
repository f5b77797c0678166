import { z } from 'zod';
import { LadderEncoder } from './recordings.js';
import { WorkerExitReport } from './workers.js';

/** Every queue and job name in one place; the worker refuses to start if one has no handler. */
export const QUEUES = {
  maintenance: 'tally-maintenance',
  webhooks: 'tally-webhooks',
  recordings: 'tally-recordings',
  transcodes: 'tally-transcodes',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** What an agent is asked to run; paths are relative to the recordings directory. */
export const LadderRun = z.object({
  recordingId: z.string(),
  appId: z.string(),
  /** Which dispatch this is; a report for an older attempt is ignored. */
  attempt: z.number().int().positive(),
  encoder: LadderEncoder,
  source: z.string(),
  ladderDir: z.string(),
});
export type LadderRun = z.infer<typeof LadderRun>;

const ReportedRendition = z.object({
  name: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  bitrateKbps: z.number().int(),
});

export const LadderReport = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('started'), recordingId: z.string(), attempt: z.number().int(), nodeId: z.string() }),
  z.object({
    outcome: z.literal('ready'),
    recordingId: z.string(),
    attempt: z.number().int(),
    nodeId: z.string(),
    renditions: z.array(ReportedRendition).min(1),
  }),
  z.object({ outcome: z.literal('failed'), recordingId: z.string(), attempt: z.number().int(), nodeId: z.string(), error: z.string() }),
]);
export type LadderReport = z.infer<typeof LadderReport>;

export const JOBS = {
  reconcileStreams: { queue: QUEUES.maintenance, name: 'streams.reconcile', payload: z.object({}) },
  /** A node's media worker ended on its own: what ran on it failed (job id = node, kind, worker and time). */
  workerExited: { queue: QUEUES.maintenance, name: 'worker.exited', payload: WorkerExitReport },
  /**
   * Sends one webhook delivery (job id = delivery id, so a delivery is queued at most once). Each app
   * has its own queue, `webhookQueueOf(appId)`; QUEUES.webhooks names the family.
   */
  deliverWebhook: { queue: QUEUES.webhooks, name: 'webhook.deliver', payload: z.object({ deliveryId: z.string() }) },
  /** Probes, checksums and moves a finished egress file into place (job id = recording id). */
  finaliseRecording: { queue: QUEUES.recordings, name: 'recording.finalise', payload: z.object({ recordingId: z.string() }) },
  /** An agent's report on a ladder it runs: started, ready with its renditions, or failed. */
  reportLadder: { queue: QUEUES.transcodes, name: 'ladder.report', payload: LadderReport },
  /** Fails over ladders whose node left the pool or whose agent never took them (repeatable). */
  sweepLadders: { queue: QUEUES.transcodes, name: 'ladders.sweep', payload: z.object({}) },
} as const;
export type JobKey = keyof typeof JOBS;

/** Ladder jobs go to the queue of the node they were admitted on; only that node's agent consumes it. */
export const LADDER_RUN_JOB = 'ladder.run';
export function transcodeQueueOf(nodeId: string): string {
  return `tally-transcode-node.${nodeId}`;
}

/** An app's webhook deliveries: one queue per app, so a slow receiver holds back only its own app. */
export function webhookQueueOf(appId: string): string {
  return `${QUEUES.webhooks}.${appId}`;
}

/** Apps whose webhook queue may hold jobs (a Redis set), and the channel that wakes workers for a new one. */
export const WEBHOOK_APPS_KEY = `${QUEUES.webhooks}:apps`;
export const WEBHOOK_WAKE_CHANNEL = `${QUEUES.webhooks}:wake`;
