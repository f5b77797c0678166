import { z } from 'zod';
import { NodeId } from './nodes.js';

/** The media workers an agent runs for its node. */
export const WORKER_KINDS = ['egress', 'ingress'] as const;
export const WorkerKind = z.enum(WORKER_KINDS);
export type WorkerKind = z.infer<typeof WorkerKind>;

/** How the agent runs them: Docker containers, child processes, or not at all (run by something else). */
export const WorkerRuntimeName = z.enum(['docker', 'native', 'none']);
export type WorkerRuntimeName = z.infer<typeof WorkerRuntimeName>;

/** `starting` until the worker takes requests; `stopping` after an idle grace or a shutdown. */
export const WorkerState = z.enum(['starting', 'ready', 'stopping', 'exited']);
export type WorkerState = z.infer<typeof WorkerState>;

const count = z.number().int().min(0);

/** Why a worker ended: `oom` (killed at its memory limit), `exit <code>` (128 + signal when killed), or `stopped` (by the agent). */
export const WorkerExit = z.object({ reason: z.string(), at: z.iso.datetime() });
export type WorkerExit = z.infer<typeof WorkerExit>;

export const WorkerView = z
  .object({
    kind: WorkerKind,
    runtime: WorkerRuntimeName,
    /** Container id (docker) or process id (native). */
    id: z.string(),
    state: WorkerState,
    limits: z.object({ memoryMb: count, cpuMillicores: count, enforcedBy: z.enum(['docker', 'cgroup2', 'cgroup1', 'rlimit', 'none']) }),
    rssMb: count.nullable(),
    startedAt: z.iso.datetime(),
    /** How long the worker has taken requests, or since it was started while it is starting. */
    uptimeS: count,
    /** Starts after an exit this worker did not ask for. */
    restarts: count,
    lastExit: WorkerExit.nullable(),
    /** When the agent stops this worker if nothing needs it (null while work runs on it). */
    idleStopAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Worker' });
export type WorkerView = z.infer<typeof WorkerView>;

export const WorkerList = z
  .object({
    nodeId: NodeId,
    runtime: WorkerRuntimeName,
    /** Kinds with no running worker are absent, with the last exit of each in `exits`. */
    items: z.array(WorkerView),
    exits: z.partialRecord(WorkerKind, WorkerExit),
    reportedAt: z.iso.datetime(),
  })
  .meta({ id: 'WorkerList' });
export type WorkerList = z.infer<typeof WorkerList>;

/** What an agent reports when a worker it ran ended without being asked to (a maintenance job). */
export const WorkerExitReport = z.object({
  nodeId: NodeId,
  kind: WorkerKind,
  workerId: z.string(),
  reason: z.string(),
  at: z.iso.datetime(),
});
export type WorkerExitReport = z.infer<typeof WorkerExitReport>;
