import { z } from 'zod';
import { LadderEncoder } from './recordings.js';
import { WorkerExitReport } from './workers.js';

/**
 * The registry of every BullMQ queue and job name: producers and processors (API, worker, agent)
 * take their names from here and nowhere else. Job names are unique across queues.
 *
 * Three queues are families built per node rather than fixed names, because what they isolate is
 * only known at run time: transcodes, `transcodeQueueOf(nodeId)`, consumed only by that node's
 * agent, which runs the ladders admission placed on its node; recording staging,
 * `recordingNodeQueueOf(nodeId)`, where the worker asks a node's agent for the files its egress
 * wrote; and node reports, `nodeReportQueueOf(nodeId)`, the only queue a node's agent produces to,
 * consumed by the worker, which takes the reporting node from the queue's name (a node's Redis user
 * can write no other node's queue, docs/adr/0025-per-node-credentials.md). Every other queue is one
 * fixed name the Nest processes register with `@nestjs/bullmq`.
 *
 * Webhook deliveries are no BullMQ jobs: the worker claims them straight from PostgreSQL
 * (docs/adr/0019-webhook-deliveries-claimed-from-postgres.md); see WEBHOOK_DELIVERIES_QUEUE below.
 */
export const QUEUES = {
  maintenance: 'tally-maintenance',
  recordings: 'tally-recordings',
  transcodes: 'tally-transcodes',
  transcodeNode: 'tally-transcode-node',
  /** A family: `recordingNodeQueueOf(nodeId)`, the recording files a node's agent is asked to stage. */
  recordingNode: 'tally-recording-node',
  nodeReport: 'tally-node-report',
  /** The disk watermark check alone: every few seconds, never behind a long sweep or a join. */
  disk: 'tally-disk',
  /** Usage metering's sweep: copies usage from rows, closes lost intervals, rolls hours up. */
  metering: 'tally-metering',
  /** Live HLS sessions moved along every few seconds, never behind a long sweep. */
  hls: 'tally-hls',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** The queues with one fixed name (the others are families, above). */
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

/**
 * When the run began and ended on the agent's clock (ladder minutes): every report carries the
 * start, so the end bills right whichever report the worker applies first. Absent from a failure
 * the worker declares for a node that left.
 */
const RunTimes = {
  startedAt: z.iso.datetime().optional(),
  endedAt: z.iso.datetime().optional(),
};

export const LadderReport = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('started'), recordingId: z.string(), attempt: z.number().int(), nodeId: z.string(), ...RunTimes }),
  z.object({
    outcome: z.literal('ready'),
    recordingId: z.string(),
    attempt: z.number().int(),
    nodeId: z.string(),
    renditions: z.array(ReportedRendition).min(1),
    ...RunTimes,
  }),
  z.object({
    outcome: z.literal('failed'),
    recordingId: z.string(),
    attempt: z.number().int(),
    nodeId: z.string(),
    error: z.string(),
    ...RunTimes,
  }),
]);
export type LadderReport = z.infer<typeof LadderReport>;

// `<appId>/<file>`: no segment may start with a dot, so nothing leaves the incoming area.
const IncomingLocation = z.string().regex(/^[A-Za-z0-9_-]+\/[A-Za-z0-9_-][A-Za-z0-9_.-]*$/, 'an <appId>/<file> location');

/**
 * Asks a node's agent to put what its egress wrote (`locations`, relative to the recordings
 * directory) into the bucket's staging area, where the worker fetches them to finalise the recording,
 * and to delete what replaced egress attempts began to write there (`discard`), which nothing reads.
 */
export const StageRecording = z.object({
  recordingId: z.string(),
  locations: z.array(IncomingLocation).min(1),
  discard: z.array(IncomingLocation).default([]),
});
export type StageRecording = z.infer<typeof StageRecording>;

/** Where a staged file waits in the bucket for the worker to finalise it: beside, never among, recordings. */
export function stagingKey(location: string): string {
  return `incoming/${location}`;
}

/** The agent's answer: which locations are in the staging area (verified), and which it has no file for. */
export const RecordingStaged = z.object({
  recordingId: z.string(),
  nodeId: z.string(),
  staged: z.array(z.string()),
  missing: z.array(z.string()),
});
export type RecordingStaged = z.infer<typeof RecordingStaged>;

export const JOBS = {
  /** Every reconciler in turn (repeatable, and on demand through POST /v1/reconcile). */
  reconcileStreams: { queue: QUEUES.maintenance, name: 'streams.reconcile', consumer: 'worker', payload: z.object({}) },
  /** Deletes app webhook events and LiveKit events past TALLY_EVENT_RETENTION_DAYS (repeatable). */
  pruneEvents: { queue: QUEUES.maintenance, name: 'events.prune', consumer: 'worker', payload: z.object({}) },
  /** A node's media worker ended on its own: what ran on it failed (job id = node, kind, worker and time). */
  workerExited: { queue: QUEUES.nodeReport, name: 'worker.exited', consumer: 'worker', payload: WorkerExitReport },
  /** Probes, checksums and moves a finished egress file into place (job id = recording id). */
  finaliseRecording: {
    queue: QUEUES.recordings,
    name: 'recording.finalise',
    consumer: 'worker',
    /** `staged`: the recording's node has staged what it had in the bucket; finalise from that, ask no more. */
    payload: z.object({ recordingId: z.string(), staged: z.boolean().optional() }),
  },
  /** Uploads a complete local recording to object storage and verifies it (job id = `<recordingId>.upload`). */
  uploadRecording: {
    queue: QUEUES.recordings,
    name: 'recording.upload',
    consumer: 'worker',
    payload: z.object({ recordingId: z.string() }),
  },
  /** An agent staged a recording's files in the bucket (or has none): the worker finalises it. */
  reportStaged: { queue: QUEUES.nodeReport, name: 'recording.staged', consumer: 'worker', payload: RecordingStaged },
  /** An agent's report on a ladder it runs: started, ready with its renditions, or failed. */
  reportLadder: { queue: QUEUES.nodeReport, name: 'ladder.report', consumer: 'worker', payload: LadderReport },
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
  /** Stages a recording's files from a node without the origin's recordings directory (job id = recording id). */
  stageRecording: { queue: QUEUES.recordingNode, name: 'recording.stage', consumer: 'agent', payload: StageRecording },
} as const satisfies Record<string, Readonly<{ queue: QueueName; name: string; consumer: JobConsumer; payload: z.ZodType }>>;
export type JobKey = keyof typeof JOBS;
export type JobPayload<K extends JobKey> = z.infer<(typeof JOBS)[K]['payload']>;

/** A node's ladder queue: only that node's agent consumes it. */
export function transcodeQueueOf(nodeId: string): string {
  return `${QUEUES.transcodeNode}.${nodeId}`;
}

/** A node's recording-staging queue: only that node's agent consumes it. */
export function recordingNodeQueueOf(nodeId: string): string {
  return `${QUEUES.recordingNode}.${nodeId}`;
}

/**
 * A node's report queue: its agent's ladder reports and media-worker exits. The worker consumes
 * one per node and refuses a report naming any node but the queue's.
 */
export function nodeReportQueueOf(nodeId: string): string {
  return `${QUEUES.nodeReport}.${nodeId}`;
}

/**
 * The name /metrics reports webhook deliveries under (`tally_queue_jobs{queue=…}`): pending rows
 * counted in PostgreSQL, so the dashboards and the backlog alert read them like a queue.
 */
export const WEBHOOK_DELIVERIES_QUEUE = 'tally-webhooks';
/** Redis channel an app id is published on after its deliveries commit: wakes the workers' dispatchers. */
export const WEBHOOK_WAKE_CHANNEL = `${WEBHOOK_DELIVERIES_QUEUE}:wake`;
