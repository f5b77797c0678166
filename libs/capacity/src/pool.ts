import { BASE_LOAD_COMPONENTS, type NodeBudget } from './budget.js';
import { runtimeOf, type WorkloadCost, type WorkloadKind } from './costs.js';
import { DEFAULT_MODEL, type CapacityModel } from './model.js';
import { clampLoad, LOAD_KEYS, subtractLoad, sumLoads, ZERO_LOAD, type Load } from './resources.js';

/** What a node can give to workloads: its budget minus its base load. */
export type NodeCapacity = Readonly<{
  id: string;
  allocatable: Load;
  /** Free NVENC sessions per GPU of an empty node. */
  nvencSessions: readonly number[];
  accepts: readonly WorkloadKind[] | undefined;
}>;

export type PoolCapacity = Readonly<{
  nodes: readonly NodeCapacity[];
  /** Sums for gauges only: a workload must fit on one node, never on the sum. */
  total: Load;
  nvencSessions: number;
}>;

export function baseLoadOf(node: NodeBudget, model: CapacityModel = DEFAULT_MODEL): Load {
  return sumLoads(BASE_LOAD_COMPONENTS.map((c) => node.baseLoad?.[c] ?? model.baseLoad[c]));
}

export function nodeCapacity(node: NodeBudget, model: CapacityModel = DEFAULT_MODEL): NodeCapacity {
  const budget: Load = { ramMb: node.ramMb, cpuMillicores: node.cpuMillicores, nicKbps: node.nicMbps * 1_000 };
  return {
    id: node.id,
    allocatable: clampLoad(subtractLoad(budget, baseLoadOf(node, model))),
    nvencSessions: node.gpus.map((g) => Math.max(0, g.nvencSessions)),
    accepts: node.accepts,
  };
}

export function poolCapacity(nodes: readonly NodeBudget[], model: CapacityModel = DEFAULT_MODEL): PoolCapacity {
  const caps = nodes.map((n) => nodeCapacity(n, model));
  return {
    nodes: caps,
    total: sumLoads(caps.map((c) => c.allocatable)),
    nvencSessions: caps.reduce((sum, c) => sum + c.nvencSessions.reduce((a, b) => a + b, 0), 0),
  };
}

export function acceptsKind(node: Readonly<{ accepts?: readonly WorkloadKind[] | undefined }>, kind: WorkloadKind): boolean {
  return node.accepts === undefined || node.accepts.includes(kind);
}

/** Guards floor() against 18.999999 from fractional profile figures. */
const EPSILON = 1e-9;

/**
 * How many units of `cost` fit in `free` after a one-off `overhead` (a runtime not yet started).
 * NVENC units are counted per GPU, because a session cannot straddle two GPUs.
 */
export function unitsThatFit(cost: WorkloadCost, free: Load, freeNvenc: readonly number[], overhead: Load = ZERO_LOAD): number {
  let units = Number.POSITIVE_INFINITY;
  for (const key of LOAD_KEYS) {
    if (cost[key] <= 0) continue;
    const room = free[key] - overhead[key];
    units = Math.min(units, room < 0 ? 0 : Math.floor(room / cost[key] + EPSILON));
  }
  if (cost.nvencSessions > 0) {
    const sessions = freeNvenc.reduce((sum, f) => sum + Math.floor(Math.max(0, f) / cost.nvencSessions + EPSILON), 0);
    units = Math.min(units, sessions);
  }
  return units;
}

/** How many of `kind` one empty node can run at once (charging the kind's runtime once). */
export function maxConcurrent(kind: WorkloadKind, node: NodeBudget, model: CapacityModel = DEFAULT_MODEL): number {
  const cap = nodeCapacity(node, model);
  if (!acceptsKind(cap, kind)) return 0;
  const runtime = runtimeOf(kind);
  const overhead = runtime === undefined ? ZERO_LOAD : model.runtimes[runtime];
  return unitsThatFit(model.costs[kind], cap.allocatable, cap.nvencSessions, overhead);
}

/** The pool's capacity for `kind` as whole units packed node by node. */
export function poolUnits(kind: WorkloadKind, nodes: readonly NodeBudget[], model: CapacityModel = DEFAULT_MODEL): number {
  return nodes.reduce((sum, n) => sum + maxConcurrent(kind, n, model), 0);
}
