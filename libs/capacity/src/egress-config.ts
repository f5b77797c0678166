import type { NodeBudget } from './budget.js';
import { EGRESS_MODES, egressKindOf, type EgressMode } from './egress-mode.js';
import type { CapacityModel } from './model.js';
import { acceptsKind, maxConcurrent, nodeCapacity } from './pool.js';
import { LOAD_KEYS, subtractLoad, type Load, type LoadKey } from './resources.js';

/**
 * The `cpu_cost` section of LiveKit egress v1.8.6 (`CPUCostConfig` in pkg/config/service.go), in
 * cores of the host egress runs on. v1.8.6 has no memory admission (no `max_memory` or
 * `memory_cost`): its only gate is `available >= required`, with `available = cores ×
 * max_cpu_utilization − Σ held costs` once a job runs (all cores while none does).
 */
export type EgressCpuCost = Readonly<{
  max_cpu_utilization: number;
  max_concurrent_web: number;
  room_composite_cpu_cost: number;
  audio_room_composite_cpu_cost: number;
  web_cpu_cost: number;
  audio_web_cpu_cost: number;
  participant_cpu_cost: number;
  track_composite_cpu_cost: number;
  track_cpu_cost: number;
}>;

export type EgressModeAdmission = Readonly<{
  /** How many jobs of this mode alone Tally admits on the node (the egress runtime charged once). */
  maxConcurrent: number;
  /** The part of the node's egress room one job takes: its largest share over RAM, CPU and NIC. */
  share: number;
  /** The resource that share is of; undefined when the mode cannot run on the node. */
  binding: LoadKey | undefined;
  /** What egress holds for one job, in host cores. */
  cpuCost: number;
}>;

export type EgressAdmission = Readonly<{
  cpuCost: EgressCpuCost;
  modes: Readonly<Record<EgressMode, EgressModeAdmission>>;
  /**
   * Every runnable mode is limited by the same resource and a Track job is held at both a lone
   * track's share and half a passthrough pair's. Then egress admits exactly the mixes of egress jobs
   * Tally admits on the node; otherwise egress refuses some mixed loads Tally would take, or admits
   * more Track jobs than Tally does (Tally's own admission, which comes first, still bounds them).
   */
  exact: boolean;
}>;

/** Held for a mode the node must refuse: more cores than any host has, so `available` never covers it. */
export const EGRESS_NEVER_CPU_COST = 100_000;

/**
 * Float sums in egress (over a Go map, in random order) may land a hair above the exact limit;
 * holding a billionth less keeps an exactly-full node admitting its last job, as Tally does.
 */
const SLACK = 1e-9;

/**
 * Egress's own admission settings for a node, derived from Tally's capacity model so that both
 * agree. Each job is held at its dominant share of what the node can give egress (allocatable
 * minus the egress runtime), scaled to the host's cores: egress's single CPU gate then counts the
 * resource Tally finds short first, RAM for Chrome included.
 *
 * `max_cpu_utilization` is the node's CPU share left for egress jobs, so a CPU-bound job is held
 * at exactly its model cost in host cores (`cpuMillicores × hostCpus / budget`). Egress replaces a
 * hold by the job's measured CPU 30 s after it starts; from then on it gates on real CPU, which
 * on a node whose budget is its hardware matches the model as far as the model is right.
 *
 * @param hostCpus the cores egress sees (it reads the cgroup CPU quota, else the CPU count)
 */
export function egressAdmission(model: CapacityModel, node: NodeBudget, hostCpus: number): EgressAdmission {
  if (!(hostCpus > 0)) throw new RangeError(`hostCpus must be positive, got ${hostCpus}`);
  const cap = nodeCapacity(node, model);
  const room = subtractLoad(cap.allocatable, model.runtimes.egress);
  const utilization = node.cpuMillicores > 0 ? Math.min(1, Math.max(0.001, room.cpuMillicores / node.cpuMillicores)) : 1;
  const capacity = hostCpus * utilization;

  const modes = Object.fromEntries(
    EGRESS_MODES.map((mode) => {
      const kind = egressKindOf(mode);
      const units = acceptsKind(cap, kind) ? maxConcurrent(kind, node, model) : 0;
      const dominant = dominantShare(model.costs[kind], room);
      const runnable = units > 0 && dominant !== undefined;
      const admission: EgressModeAdmission = runnable
        ? { maxConcurrent: units, share: dominant.share, binding: dominant.key, cpuCost: dominant.share * capacity * (1 - SLACK) }
        : { maxConcurrent: 0, share: Number.POSITIVE_INFINITY, binding: undefined, cpuCost: EGRESS_NEVER_CPU_COST };
      return [mode, admission];
    }),
  ) as Record<EgressMode, EgressModeAdmission>;

  const bindings = new Set(EGRESS_MODES.map((m) => modes[m].binding).filter((b) => b !== undefined));
  const roomComposite = modes.room_composite;
  const trackComposite = modes.track_composite;
  // Egress sees a passthrough recording as two Track jobs: each is held at half the pair's share
  // when that is less than a lone track's, so egress never refuses a pair Tally admitted.
  const trackCpuCost = Math.min(modes.track.cpuCost, modes.passthrough.cpuCost / 2);
  const pairsAsHeld = modes.passthrough.maxConcurrent === 0 || Math.abs(2 * trackCpuCost - modes.passthrough.cpuCost) < 1e-9;
  return {
    modes,
    exact: bindings.size <= 1 && trackCpuCost === modes.track.cpuCost && pairsAsHeld,
    cpuCost: {
      max_cpu_utilization: utilization,
      // Chrome instances; egress reads 0 as "its default of 18", so a node without room keeps 1
      // and refuses through the cost instead.
      max_concurrent_web: Math.max(1, roomComposite.maxConcurrent),
      room_composite_cpu_cost: roomComposite.cpuCost,
      // Audio-only and web egress still run Chrome: held like a room composite.
      audio_room_composite_cpu_cost: roomComposite.cpuCost,
      web_cpu_cost: roomComposite.cpuCost,
      audio_web_cpu_cost: roomComposite.cpuCost,
      // One participant's tracks muxed by GStreamer, as a track composite does.
      participant_cpu_cost: trackComposite.cpuCost,
      track_composite_cpu_cost: trackComposite.cpuCost,
      track_cpu_cost: trackCpuCost,
    },
  };
}

/** The largest cost / room ratio over the resources the workload uses; undefined when none is used. */
function dominantShare(cost: Load, room: Load): { share: number; key: LoadKey } | undefined {
  let best: { share: number; key: LoadKey } | undefined;
  for (const key of LOAD_KEYS) {
    if (cost[key] <= 0) continue;
    const share = room[key] > 0 ? cost[key] / room[key] : Number.POSITIVE_INFINITY;
    if (best === undefined || share > best.share) best = { share, key };
  }
  return best;
}
