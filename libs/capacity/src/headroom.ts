import type { PoolState } from './admission.js';
import type { NodeBudget } from './budget.js';
import { WORKLOAD_KINDS, runtimeOf, type WorkloadKind } from './costs.js';
import { checkDisk, diskStates, type DiskState } from './disk.js';
import { acceptsKind, nodeCapacity, unitsThatFit } from './pool.js';
import { subtractLoad, ZERO_LOAD, type Load } from './resources.js';
import { diskUsageOf, nodeUsageOf } from './usage.js';

export type NodeHeadroom = Readonly<{
  nodeId: string;
  allocatable: Load;
  used: Load;
  free: Load;
  nvencFree: readonly number[];
  /** The node's media filesystems: watermarks, admissible MB, MB reserved by running writers. */
  disks: readonly DiskState[];
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
    const reservedMb = (key: string) => diskUsageOf(pool.usage, key);
    const units = Object.fromEntries(
      WORKLOAD_KINDS.map((kind) => {
        if (!acceptsKind(cap, kind)) return [kind, 0];
        const runtime = runtimeOf(kind);
        const idle = runtime !== undefined && (used.runtimes[runtime] ?? 0) === 0;
        const overhead = idle ? pool.model.runtimes[runtime] : ZERO_LOAD;
        return [
          kind,
          Math.min(unitsThatFit(pool.model.costs[kind], free, nvencFree, overhead), diskUnits(pool, node.disks, reservedMb, kind)),
        ];
      }),
    ) as Record<WorkloadKind, number>;
    const disks = diskStates(node.disks, pool.model.disk, reservedMb);
    return { nodeId: node.id, allocatable: cap.allocatable, used: used.load, free, nvencFree, disks, units };
  });
}

/** How many units of a writer its filesystem still takes (unbounded for kinds that write nothing there). */
function diskUnits(pool: PoolState, disks: NodeBudget['disks'], reservedMb: (key: string) => number, kind: WorkloadKind): number {
  const one = checkDisk(pool.model.disk, disks, reservedMb, kind, 1);
  if (one === undefined) return Number.POSITIVE_INFINITY;
  if (!one.ok) return 0;
  return Math.floor((one.limitMb - reservedMb(one.key)) / one.mb);
}
