import { z } from 'zod';
import { LadderEncoder } from './recordings.js';
import { WorkerExitReport } from './workers.js';

/**
 * The registry of every BullMQ queue and job name: producers and processors (API, worker, agent)
 * take their names from here and nowhere else. Job names are unique across queues.
 *
 * One queue is a family built per key rather than a fixed name, because what it isolates is only
 * known at run time: transcodes per node, `transcodeQueueOf(nodeId)`, consumed only by that node's
 * agent, which runs the ladders admission placed on its node. Every other queue is one fixed name
 * the Nest processes register with `@nestjs/bullmq`.
 *
 * Webhook deliveries are no BullMQ jobs: the worker claims them straight from PostgreSQL
 * (docs/adr/0019-webhook-deliveries-claimed-from-postgres.md); see WEBHOOK_DELIVERIES_QUEUE below.
 */
export const QUEUES = {
  maintenance: 'tally-maintenance',
  recordings: 'tally-recordings',
  transcodes: 'tally-transcodes',
  transcodeNode: 'tally-transcode-node',
  /** The disk watermark check alone: every few seconds, never behind a long sweep or a join. */
  disk: 'tally-disk',
  /** Usage metering's sweep: copies usage from rows, closes lost intervals, rolls hours up. */
  metering: 'tally-metering',
  /** Live HLS sessions moved along every few seconds, never behind a long sweep. */
  hls: 'tally-hls',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** The queues with one fixed name (the other is a family, above). */
export const STATIC_QUEUES = [QUEUES.maintenance, QUEUES.recordings, QUEUES.transcodes, QUEUES.disk, QUEUES.metering, QUEUES.hls] as const;
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
  /** Deletes app webhook events and LiveKit events past TALLY_EVENT_RETENTION_DAYS (repeatable). */
  pruneEvents: { queue: QUEUES.maintenance, name: 'events.prune', consumer: 'worker', payload: z.object({}) },
  /** A node's media worker ended on its own: what ran on it failed (job id = node, kind, worker and time). */
  workerExited: { queue: QUEUES.maintenance, name: 'worker.exited', consumer: 'worker', payload: WorkerExitReport },
  /** Probes, checksums and moves a finished egress file into place (job id = recording id). */
  finaliseRecording: {
    queue: QUEUES.recordings,
    name: 'recording.finalise',
    consumer: 'worker',
    payload: z.object({ recordingId: z.string() }),
  },
  /** Uploads a complete local recording to object storage and verifies it (job id = `<recordingId>.upload`). */
  uploadRecording: {
    queue: QUEUES.recordings,
    name: 'recording.upload',
    consumer: 'worker',
    payload: z.object({ recordingId: z.string() }),
  },
  /** An agent's report on a ladder it runs: started, ready with its renditions, or failed. */
  reportLadder: { queue: QUEUES.transcodes, name: 'ladder.report', consumer: 'worker', payload: LadderReport },
  /** Fails over ladders whose node left the pool or whose agent never took them (repeatable). */
  sweepLadders: { queue: QUEUES.transcodes, name: 'ladders.sweep', consumer: 'worker', payload: z.object({}) },
  /** Compares each media filesystem with its watermarks and stops the writers on a full one (repeatable). */
  checkDiskWatermarks: { queue: QUEUES.disk, name: 'disk.watermarks', consumer: 'worker', payload: z.object({}) },
  /** Copies usage from rows, closes intervals whose end was lost, rolls closed hours up (repeatable). */
  sweepUsage: { queue: QUEUES.metering, name: 'usage.sweep', consumer: 'worker', payload: z.object({}) },
  /** Live HLS sessions: starting → live or failed, open → stopped with their stream, segments deleted after retention (repeatable). */
  sweepHls: { queue: QUEUES.hls, name: 'hls.sweep', consumer: 'worker', payload: z.object({}) },
  /** Runs a ladder, on the queue of the node it was admitted on (job id = `<recordingId>.<attempt>`). */
  runLadder: { queue: QUEUES.transcodeNode, name: 'ladder.run', consumer: 'agent', payload: LadderRun },
} as const satisfies Record<string, Readonly<{ queue: QueueName; name: string; consumer: JobConsumer; payload: z.ZodType }>>;
export type JobKey = keyof typeof JOBS;
export type JobPayload<K extends JobKey> = z.infer<(typeof JOBS)[K]['payload']>;

/** A node's ladder queue: only that node's agent consumes it. */
export function transcodeQueueOf(nodeId: string): string {
  return `${QUEUES.transcodeNode}.${nodeId}`;
}

/**
 * The name /metrics reports webhook deliveries under (`tally_queue_jobs{queue=…}`): pending rows
 * counted in PostgreSQL, so the dashboards and the backlog alert read them like a queue.
 */
export const WEBHOOK_DELIVERIES_QUEUE = 'tally-webhooks';
/** Redis channel an app id is published on after its deliveries commit: wakes the workers' dispatchers. */
export const WEBHOOK_WAKE_CHANNEL = `${WEBHOOK_DELIVERIES_QUEUE}:wake`;
