import type { NodeBudget } from './budget.js';
import type { CapacityModel } from './model.js';
import { nodeCapacity } from './pool.js';
import { addLoad } from './resources.js';

export type WorkerLimit = Readonly<{ memoryMb: number; cpuMillicores: number }>;
export type WorkerLimits = Readonly<{ egress: WorkerLimit; ingress: WorkerLimit }>;

/** Below this a worker cannot even start; a node this small hosts no media work anyway. */
const FLOOR: WorkerLimit = { memoryMb: 256, cpuMillicores: 250 };

/**
 * The most each media worker of a node may use: its own idle footprint plus everything the node
 * can give to workloads (its budget minus the base load). Admission never places more than that on
 * a worker, so the limit only bites on a worker that outgrows what was admitted to it, and the base
 * load (livekit-server, the control plane, the host) stays out of its reach: a Chrome egress cannot
 * starve the SFU.
 */
export function workerLimits(model: CapacityModel, node: NodeBudget): WorkerLimits {
  const { allocatable } = nodeCapacity(node, model);
  const limit = (idle: { ramMb: number; cpuMillicores: number }): WorkerLimit => {
    const total = addLoad({ ...idle, nicKbps: 0 }, allocatable);
    return {
      memoryMb: Math.max(FLOOR.memoryMb, Math.floor(total.ramMb)),
      cpuMillicores: Math.max(FLOOR.cpuMillicores, Math.floor(total.cpuMillicores)),
    };
  };
  return { egress: limit(model.runtimes.egress), ingress: limit(model.baseLoad.ingressIdle) };
}
