import type { PoolState } from './admission.js';
import { WORKLOAD_KINDS, runtimeOf, type WorkloadKind } from './costs.js';
import { acceptsKind, nodeCapacity, unitsThatFit } from './pool.js';
import { subtractLoad, ZERO_LOAD, type Load } from './resources.js';
import { nodeUsageOf } from './usage.js';

export type NodeHeadroom = Readonly<{
  nodeId: string;
  allocatable: Load;
  used: Load;
  free: Load;
  nvencFree: readonly number[];
  /** How many more of each kind this node could start now, each kind on its own. */
  units: Readonly<Record<WorkloadKind, number>>;
}>;

/** The pool's free capacity node by node, for gauges and metrics. */
export function headroom(pool: PoolState): NodeHeadroom[] {
  return pool.nodes.map((node) => {
    const cap = nodeCapacity(node, pool.model);
    const used = nodeUsageOf(pool.usage, node.id);
    const free = subtractLoad(cap.allocatable, used.load);
    const nvencFree = cap.nvencSessions.map((limit, i) => limit - (used.nvenc[i] ?? 0));
    const units = Object.fromEntries(
      WORKLOAD_KINDS.map((kind) => {
        if (!acceptsKind(cap, kind)) return [kind, 0];
        const runtime = runtimeOf(kind);
        const idle = runtime !== undefined && (used.runtimes[runtime] ?? 0) === 0;
        const overhead = idle ? pool.model.runtimes[runtime] : ZERO_LOAD;
        return [kind, unitsThatFit(pool.model.costs[kind], free, nvencFree, overhead)];
      }),
    ) as Record<WorkloadKind, number>;
    return { nodeId: node.id, allocatable: cap.allocatable, used: used.load, free, nvencFree, units };
  });
}
