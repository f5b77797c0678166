import { z } from 'zod';
import { LadderEncoder } from './recordings.js';
import { WorkerExitReport } from './workers.js';

/**
 * The registry of every BullMQ queue and job name: producers and processors (API, worker, agent)
 * take their names from here and nowhere else. Job names are unique across queues.
 *
 * Two queues are families built per key rather than fixed names, because what they isolate is
 * only known at run time:
 * - webhooks: one queue per app, `webhookQueueOf(appId)`, so a receiver that never answers holds
 *   back only its own app's deliveries; the worker opens a consumer (a lane) per app with
 *   deliveries (docs/adr/0011-fair-webhook-delivery.md). `QUEUES.webhooks` names the family.
 * - transcodes per node: `transcodeQueueOf(nodeId)`, consumed only by that node's agent, which
 *   runs the ladders admission placed on its node.
 * Every other queue is one fixed name the Nest processes register with `@nestjs/bullmq`.
 */
export const QUEUES = {
  maintenance: 'tally-maintenance',
  webhooks: 'tally-webhooks',
  recordings: 'tally-recordings',
  transcodes: 'tally-transcodes',
  transcodeNode: 'tally-transcode-node',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** The queues with one fixed name (the others are families, above). */
export const STATIC_QUEUES = [QUEUES.maintenance, QUEUES.recordings, QUEUES.transcodes] as const;
export type StaticQueueName = (typeof STATIC_QUEUES)[number];

/** Which process consumes a job: the worker checks at boot that each of its jobs has exactly one handler. */
export type JobConsumer = 'worker' | 'agent';

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
  /** Every reconciler in turn (repeatable, and on demand through POST /v1/reconcile). */
  reconcileStreams: { queue: QUEUES.maintenance, name: 'streams.reconcile', consumer: 'worker', payload: z.object({}) },
  /** A node's media worker ended on its own: what ran on it failed (job id = node, kind, worker and time). */
  workerExited: { queue: QUEUES.maintenance, name: 'worker.exited', consumer: 'worker', payload: WorkerExitReport },
  /** Sends one webhook delivery (job id = delivery id, so a delivery is queued at most once), on its app's queue. */
  deliverWebhook: {
    queue: QUEUES.webhooks,
    name: 'webhook.deliver',
    consumer: 'worker',
    payload: z.object({ deliveryId: z.string() }),
  },
  /** Probes, checksums and moves a finished egress file into place (job id = recording id). */
  finaliseRecording: {
    queue: QUEUES.recordings,
    name: 'recording.finalise',
    consumer: 'worker',
    payload: z.object({ recordingId: z.string() }),
  },
  /** An agent's report on a ladder it runs: started, ready with its renditions, or failed. */
  reportLadder: { queue: QUEUES.transcodes, name: 'ladder.report', consumer: 'worker', payload: LadderReport },
  /** Fails over ladders whose node left the pool or whose agent never took them (repeatable). */
  sweepLadders: { queue: QUEUES.transcodes, name: 'ladders.sweep', consumer: 'worker', payload: z.object({}) },
  /** Runs a ladder, on the queue of the node it was admitted on (job id = `<recordingId>.<attempt>`). */
  runLadder: { queue: QUEUES.transcodeNode, name: 'ladder.run', consumer: 'agent', payload: LadderRun },
} as const satisfies Record<string, Readonly<{ queue: QueueName; name: string; consumer: JobConsumer; payload: z.ZodType }>>;
export type JobKey = keyof typeof JOBS;
export type JobPayload<K extends JobKey> = z.infer<(typeof JOBS)[K]['payload']>;

/** A node's ladder queue: only that node's agent consumes it. */
export function transcodeQueueOf(nodeId: string): string {
  return `${QUEUES.transcodeNode}.${nodeId}`;
}

/** An app's webhook deliveries: one queue per app, so a slow receiver holds back only its own app. */
export function webhookQueueOf(appId: string): string {
  return `${QUEUES.webhooks}.${appId}`;
}

/** Apps whose webhook queue may hold jobs (a Redis set), and the channel that wakes workers for a new one. */
export const WEBHOOK_APPS_KEY = `${QUEUES.webhooks}:apps`;
export const WEBHOOK_WAKE_CHANNEL = `${QUEUES.webhooks}:wake`;
