import { CapacityLedger, loadCapacityModel } from '@tally/admission';
import { JOBS, nodeReportQueueOf, WORKER_KINDS, type WorkerExitReport, type WorkerKind } from '@tally/contracts';
import { NodeRegistry, NodeWorkers, toNodeBudget, WORKER_KEYS } from '@tally/nodes';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { DockerDriver } from './docker-driver.js';
import { NativeDriver } from './native-driver.js';
import { settledWithin } from './settled-within.js';
import type { WorkerDriver } from './worker-driver.js';
import { workerName, workerSpec } from './worker-specs.js';
import { WorkerSupervisor } from './worker-supervisor.js';
import type { WorkersConfig } from './workers-config.js';

export type RunningWorkers = Readonly<{
  supervisor: WorkerSupervisor;
  /** Stops every worker. */
  stop(): Promise<void>;
  /** Stops supervising and leaves the workers running, for the next agent to adopt. */
  handOver(): Promise<void>;
}>;

const TICK_MS = 1_000;
const START_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 30_000;
const STOP_REDIS_WAIT_MS = 3_000;

export function workerDriver(config: WorkersConfig): WorkerDriver | undefined {
  switch (config.runtime) {
    case 'docker':
      return new DockerDriver({ socketPath: config.dockerSocket });
    case 'native':
      return new NativeDriver({ stateDir: config.dir });
    case 'none':
      return undefined;
  }
}

/**
 * Runs the node's egress and ingress workers on demand (config.runtime docker or native). Egress
 * is needed while the ledger counts egress work on the node or a dispatcher demands it; ingress
 * while the node has ingresses. Unexpected exits go to the worker as `worker.exited` jobs on the node's report queue.
 */
export async function startWorkers(
  options: Readonly<{ nodeId: string; config: WorkersConfig; redis: Redis; subscriber: Redis; log: (line: string) => void }>,
): Promise<RunningWorkers | undefined> {
  const { nodeId, config, redis, subscriber, log } = options;
  const driver = workerDriver(config);
  if (!driver) return undefined;
  const model = loadCapacityModel(config.capacityProfile);
  const ledger = new CapacityLedger(redis);
  const registry = new NodeRegistry(redis);
  const workers = new NodeWorkers(redis);
  const reports = new Queue(nodeReportQueueOf(nodeId), { connection: redis });

  const spec = async (kind: WorkerKind) => {
    const node = await registry.get(nodeId);
    if (!node) throw new Error(`node ${nodeId} has no heartbeat yet`);
    return workerSpec(kind, { nodeId, budget: toNodeBudget(node), model, config });
  };

  const supervisor = new WorkerSupervisor({
    nodeId,
    driver,
    kinds: WORKER_KINDS,
    spec,
    work: {
      activeWork: async (kind) => (kind === 'egress' ? ((await ledger.runtimesOn(nodeId)).egress ?? 0) : workers.retained(nodeId, kind)),
      demanded: (kind) => workers.demanded(nodeId, kind),
    },
    idleGraceMs: config.idleGraceMs,
    startTimeoutMs: START_TIMEOUT_MS,
    stopGraceMs: STOP_GRACE_MS,
    report: (list) => workers.report(list, 10),
    onUnexpectedExit: async (report: WorkerExitReport) => {
      const payload = JOBS.workerExited.payload.parse(report);
      await reports.add(JOBS.workerExited.name, payload, {
        jobId: `${payload.nodeId}.${payload.kind}.${payload.workerId}.${Date.parse(payload.at)}`,
        attempts: 10,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: 1_000,
      });
    },
    log,
  });

  // A worker the previous agent left running (an upgrade hands them over, and a crashed agent
  // leaves them) keeps its recordings when this agent can adopt it; anything else is removed.
  for (const kind of WORKER_KINDS) {
    // A kind this node cannot run (its binary missing) has nothing to adopt either.
    const adopted = await spec(kind)
      .then((s) => driver.adopt?.(s))
      .catch(() => undefined);
    if (adopted) {
      supervisor.adopt(kind, adopted);
      continue;
    }
    const removed = await driver.removeOrphans(workerName(nodeId, kind));
    if (removed > 0) log(`removed ${removed} ${kind} worker(s) a previous agent left running`);
  }

  await subscriber.subscribe(WORKER_KEYS.wake(nodeId));
  subscriber.on('message', () => void supervisor.tick());
  const timer = setInterval(() => void supervisor.tick(), TICK_MS);
  await supervisor.tick();
  log(`media workers: ${driver.name} runtime, idle grace ${Math.round(config.idleGraceMs / 1000)} s`);

  return {
    supervisor,
    async handOver() {
      clearInterval(timer);
      await subscriber.unsubscribe();
      await supervisor.release();
      await reports.close();
    },
    // The workers stop first and whatever Redis is doing: what follows only tidies Redis up.
    async stop() {
      clearInterval(timer);
      await supervisor.stopAll();
      await settledWithin(Promise.all([subscriber.unsubscribe(), workers.clear(nodeId), reports.close()]), STOP_REDIS_WAIT_MS);
    },
  };
}
