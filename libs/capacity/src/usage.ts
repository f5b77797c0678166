import { quotaClassesOf, type QuotaClass } from './app-limits.js';
import { runtimeOf, type Runtime, type WorkloadKind } from './costs.js';
import type { CapacityModel } from './model.js';
import { addLoad, scaleLoad, subtractLoad, ZERO_LOAD, type Load } from './resources.js';

/** One admitted group of identical workloads, all on one node (and one GPU when they encode). */
export type Reservation = Readonly<{
  appId: string;
  kind: WorkloadKind;
  count: number;
  nodeId: string;
  gpuIndex?: number;
  /** MB reserved on the filesystem the workloads write to (its ledger key), when they write. */
  disk?: Readonly<{ key: string; mb: number }>;
}>;

export type NodeUsage = Readonly<{
  /** Workloads plus the idle footprint of every runtime that is up. */
  load: Load;
  nvenc: readonly number[];
  /** How many workloads keep each runtime up. */
  runtimes: Readonly<Partial<Record<Runtime, number>>>;
}>;

export type AppUsage = Readonly<Partial<Record<QuotaClass, number>>>;

/** The counters the admission script keeps (in Redis), as a value. */
export type Usage = Readonly<{
  nodes: Readonly<Record<string, NodeUsage>>;
  apps: Readonly<Record<string, AppUsage>>;
  /** MB that running writers reserve per filesystem key (NodeDisk.key); absent when nothing is reserved. */
  disks?: Readonly<Record<string, number>>;
}>;

export const EMPTY_USAGE: Usage = Object.freeze({ nodes: {}, apps: {} });
const IDLE_NODE: NodeUsage = Object.freeze({ load: ZERO_LOAD, nvenc: [], runtimes: {} });

export function nodeUsageOf(usage: Usage, nodeId: string): NodeUsage {
  return usage.nodes[nodeId] ?? IDLE_NODE;
}

/** MB the running writers reserve on the filesystem `key`. */
export function diskUsageOf(usage: Usage, key: string): number {
  return usage.disks?.[key] ?? 0;
}

export function appUsageOf(usage: Usage, appId: string, cls: QuotaClass): number {
  return usage.apps[appId]?.[cls] ?? 0;
}

/** What a reservation adds to its node: the workloads, and the runtime's idle footprint if it starts it. */
export function chargeOf(
  model: CapacityModel,
  node: NodeUsage,
  kind: WorkloadKind,
  count: number,
  unitCost: Load = model.costs[kind],
): Load {
  const workloads = scaleLoad(unitCost, count);
  const runtime = runtimeOf(kind);
  const startsRuntime = runtime !== undefined && (node.runtimes[runtime] ?? 0) === 0;
  return startsRuntime ? addLoad(workloads, model.runtimes[runtime]) : workloads;
}

export function applyReservation(usage: Usage, r: Reservation, model: CapacityModel): Usage {
  const node = nodeUsageOf(usage, r.nodeId);
  const nextNode: NodeUsage = {
    load: addLoad(node.load, chargeOf(model, node, r.kind, r.count)),
    nvenc: shiftGpu(node.nvenc, r.gpuIndex, model.costs[r.kind].nvencSessions * r.count),
    runtimes: shiftRuntime(node.runtimes, runtimeOf(r.kind), r.count),
  };
  return { nodes: { ...usage.nodes, [r.nodeId]: nextNode }, apps: shiftApp(usage, r, r.count), ...shiftDisk(usage, r, 1) };
}

/** Gives back exactly what `applyReservation` took; throws when releasing something never admitted. */
export function releaseReservation(usage: Usage, r: Reservation, model: CapacityModel): Usage {
  const node = nodeUsageOf(usage, r.nodeId);
  const runtime = runtimeOf(r.kind);
  const held = runtime === undefined ? r.count : (node.runtimes[runtime] ?? 0);
  if (held < r.count) throw new Error(`release of ${r.count} ${r.kind} on ${r.nodeId}: only ${held} held`);
  let freed = scaleLoad(model.costs[r.kind], r.count);
  if (runtime !== undefined && held === r.count) freed = addLoad(freed, model.runtimes[runtime]);
  const nextNode: NodeUsage = {
    load: subtractLoad(node.load, freed),
    nvenc: shiftGpu(node.nvenc, r.gpuIndex, -model.costs[r.kind].nvencSessions * r.count),
    runtimes: shiftRuntime(node.runtimes, runtime, -r.count),
  };
  return { nodes: { ...usage.nodes, [r.nodeId]: nextNode }, apps: shiftApp(usage, r, -r.count), ...shiftDisk(usage, r, -1) };
}

function shiftGpu(nvenc: readonly number[], gpuIndex: number | undefined, sessions: number): readonly number[] {
  if (sessions === 0) return nvenc;
  if (gpuIndex === undefined) throw new Error('an NVENC workload needs a gpuIndex');
  const next = [...nvenc];
  while (next.length <= gpuIndex) next.push(0);
  next[gpuIndex] = (next[gpuIndex] ?? 0) + sessions;
  return next;
}

function shiftRuntime(runtimes: NodeUsage['runtimes'], runtime: Runtime | undefined, count: number): NodeUsage['runtimes'] {
  if (runtime === undefined) return runtimes;
  return { ...runtimes, [runtime]: (runtimes[runtime] ?? 0) + count };
}

function shiftApp(usage: Usage, r: Reservation, count: number): Usage['apps'] {
  const app = { ...usage.apps[r.appId] };
  for (const cls of quotaClassesOf(r.kind)) {
    const next = (app[cls] ?? 0) + count;
    if (next < 0) throw new Error(`release of ${r.count} ${r.kind}: app ${r.appId} holds only ${app[cls] ?? 0} ${cls}`);
    app[cls] = next;
  }
  return { ...usage.apps, [r.appId]: app };
}

function shiftDisk(usage: Usage, r: Reservation, sign: 1 | -1): Pick<Usage, 'disks'> {
  if (r.disk === undefined) return usage.disks === undefined ? {} : { disks: usage.disks };
  const next = diskUsageOf(usage, r.disk.key) + sign * r.disk.mb;
  if (next < 0) throw new Error(`release of ${r.disk.mb} MB on ${r.disk.key}: only ${diskUsageOf(usage, r.disk.key)} MB held`);
  return { disks: { ...usage.disks, [r.disk.key]: next } };
}
