import { quotaClassesOf, type AppLimits, type AppResource } from './app-limits.js';
import type { NodeBudget } from './budget.js';
import type { GuaranteeRefusal } from './guarantees.js';
import { runtimeOf, type Runtime, type WorkloadCost, type WorkloadKind } from './costs.js';
import { checkDisk, type DiskRole } from './disk.js';
import type { CapacityModel } from './model.js';
import { acceptsKind, nodeCapacity } from './pool.js';
import { LOAD_KEYS, scaleLoad, type Load, type LoadKey } from './resources.js';
import {
  appUsageOf,
  applyReservation,
  chargeOf,
  diskUsageOf,
  nodeUsageOf,
  releaseReservation,
  type Reservation,
  type Usage,
} from './usage.js';

/** The pool as the admission script sees it at one instant. */
export type PoolState = Readonly<{ nodes: readonly NodeBudget[]; model: CapacityModel; usage: Usage }>;

export type AdmissionRequest = Readonly<{
  appId: string;
  /** The app's effective limits (`effectiveLimits`). */
  limits: AppLimits;
  kind: WorkloadKind;
  /** Units admitted together, all on one node; 1 when absent. */
  count?: number;
  /** Pins the placement, e.g. a viewer to the node that hosts its room. */
  nodeId?: string;
  /** What one unit costs when the workload is sized per instance (a camera's fps × frame size); the model's cost when absent. */
  unitCost?: WorkloadCost;
  /** The filesystem role the workload writes to when it is not its kind's own (live HLS runs as an egress). */
  diskRole?: DiskRole;
  /**
   * Work that already runs (its reservation was lost): its disk reservation is charged even past the
   * filesystem's limit, since refusing it would not stop it writing, and new writers must see it.
   */
  restoring?: boolean;
}>;

export type NodeResource = 'node.ram' | 'node.cpu' | 'node.nic' | 'node.nvenc' | 'node.disk' | 'node.unavailable';

/** Why a request was refused, in the units of the resource (MB, millicores, kbps, sessions, MB of disk, workloads). */
export type Refusal =
  | Readonly<{ code: 'quota_exceeded'; resource: AppResource; limit: number; used: number; requested: number }>
  | Readonly<{
      code: 'capacity_exhausted';
      resource: NodeResource;
      limit: number;
      used: number;
      requested: number;
      /** The node that came closest to fitting, absent when no node may host the kind. */
      nodeId?: string;
    }>
  | GuaranteeRefusal;

export type Placement = Readonly<{
  reservation: Reservation;
  /** The workloads' own cost (cost × count). */
  workload: Load;
  /** The shared runtime the workloads need; the atomic script adds its idle load iff none of its workloads run. */
  runtime?: Readonly<{ name: Runtime; idle: Load }>;
  /** What the node's counters grow by on the snapshot this was decided on: workload, plus the runtime if idle. */
  charge: Load;
  /** The node's limits, for the atomic script to re-check against its live counters. */
  allocatable: Load;
  nvencSessions: number;
  /** What the workloads reserve on their filesystem and what that filesystem admits, for the atomic script. */
  disk?: Readonly<{ key: string; mb: number; limitMb: number }>;
}>;

export type Admission = Readonly<{ ok: true; placement: Placement }> | Readonly<{ ok: false; refusal: Refusal }>;

const RESOURCE_OF: Readonly<Record<LoadKey, NodeResource>> = {
  ramMb: 'node.ram',
  cpuMillicores: 'node.cpu',
  nicKbps: 'node.nic',
};

/** Rooms, ingresses and cameras are spread so that the viewers who follow them find room on their node. */
const SPREAD: ReadonlySet<WorkloadKind> = new Set<WorkloadKind>([
  'stream',
  'viewer.webrtc',
  'ingress.rtmp',
  'ingress.whip',
  'camera.mjpeg',
]);

const EPSILON = 1e-9;

type Shortfall = Readonly<{ resource: NodeResource; limit: number; used: number; requested: number; over: number }>;
type Candidate = Readonly<{
  nodeId: string;
  allocatable: Load;
  charge: Load;
  gpuIndex?: number;
  disk?: Readonly<{ key: string; mb: number; limitMb: number }>;
  headroom: number;
  shortfalls: Shortfall[];
}>;

/**
 * Decides whether `count` units of `kind` can start for the app now: first its quota, then one node
 * that can hold all of them (never the pool's sum). Pure: the caller applies the placement atomically.
 */
export function fits(pool: PoolState, request: AdmissionRequest): Admission {
  const count = request.count ?? 1;
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);

  for (const cls of quotaClassesOf(request.kind)) {
    const used = appUsageOf(pool.usage, request.appId, cls);
    const limit = request.limits[cls];
    if (used + count > limit) {
      return { ok: false, refusal: { code: 'quota_exceeded', resource: `app.${cls}`, limit, used, requested: count } };
    }
  }

  const hosts = pool.nodes.filter((n) => (request.nodeId === undefined || n.id === request.nodeId) && acceptsKind(n, request.kind));
  if (hosts.length === 0) {
    return {
      ok: false,
      refusal: { code: 'capacity_exhausted', resource: 'node.unavailable', limit: 0, used: 0, requested: count },
    };
  }

  const unitCost = request.unitCost ?? pool.model.costs[request.kind];
  const candidates = hosts.map((n) => evaluate(pool, n, request, unitCost, count));
  const fitting = candidates.filter((c) => c.shortfalls.length === 0);
  if (fitting.length > 0) {
    const spread = SPREAD.has(request.kind);
    const best = fitting.reduce((a, b) => ((spread ? b.headroom > a.headroom : b.headroom < a.headroom) ? b : a));
    const reservation: Reservation = {
      appId: request.appId,
      kind: request.kind,
      count,
      nodeId: best.nodeId,
      ...(best.gpuIndex === undefined ? {} : { gpuIndex: best.gpuIndex }),
      ...(best.disk === undefined ? {} : { disk: { key: best.disk.key, mb: best.disk.mb } }),
    };
    const cost = unitCost;
    const runtime = runtimeOf(request.kind);
    const placement: Placement = {
      reservation,
      workload: scaleLoad(cost, count),
      ...(runtime === undefined ? {} : { runtime: { name: runtime, idle: pool.model.runtimes[runtime] } }),
      charge: best.charge,
      allocatable: best.allocatable,
      nvencSessions: cost.nvencSessions * count,
      ...(best.disk === undefined ? {} : { disk: best.disk }),
    };
    return { ok: true, placement };
  }

  // Name the resource of the node that came closest: fewest short resources, then the smallest excess.
  const closest = candidates.reduce((a, b) => (closer(b, a) ? b : a));
  const worst = closest.shortfalls.reduce((a, b) => (b.over > a.over ? b : a));
  const { resource, limit, used, requested } = worst;
  return {
    ok: false,
    refusal: { code: 'capacity_exhausted', resource, limit, used, requested, nodeId: closest.nodeId },
  };
}

export type AdmitResult = Readonly<{ ok: true; placement: Placement; usage: Usage }> | Readonly<{ ok: false; refusal: Refusal }>;

/** `fits`, then the counters after taking the reservation. */
export function admit(pool: PoolState, request: AdmissionRequest): AdmitResult {
  const admission = fits(pool, request);
  if (!admission.ok) return admission;
  const usage = applyReservation(pool.usage, admission.placement.reservation, pool.model);
  return { ok: true, placement: admission.placement, usage };
}

/** The counters after the reservation's workloads ended (or its call to LiveKit failed, or its TTL lapsed). */
export function release(pool: PoolState, reservation: Reservation): Usage {
  return releaseReservation(pool.usage, reservation, pool.model);
}

function evaluate(pool: PoolState, node: NodeBudget, request: AdmissionRequest, unitCost: WorkloadCost, count: number): Candidate {
  const { kind } = request;
  const cap = nodeCapacity(node, pool.model);
  const used = nodeUsageOf(pool.usage, node.id);
  const charge = chargeOf(pool.model, used, kind, count, unitCost);
  const shortfalls: Shortfall[] = [];
  let headroom = Number.POSITIVE_INFINITY;
  let dominant = -1;
  for (const key of LOAD_KEYS) {
    if (charge[key] <= 0) continue;
    const limit = cap.allocatable[key];
    const after = used.load[key] + charge[key];
    if (after > limit + EPSILON) {
      shortfalls.push({
        resource: RESOURCE_OF[key],
        limit,
        used: used.load[key],
        requested: charge[key],
        over: (after - limit) / charge[key],
      });
    } else if (charge[key] / limit > dominant) {
      // Best or worst fit is judged on the resource this workload weighs most on.
      dominant = charge[key] / limit;
      headroom = (limit - after) / limit;
    }
  }

  const diskCheck = checkDisk(pool.model.disk, node.disks, (key) => diskUsageOf(pool.usage, key), kind, count, request.diskRole);
  let disk: Candidate['disk'];
  if (diskCheck?.ok === false && request.restoring) {
    disk = { key: diskCheck.key, mb: diskCheck.requested, limitMb: diskCheck.limit };
  } else if (diskCheck?.ok === false) {
    const { limit, used: usedMb, requested } = diskCheck;
    shortfalls.push({ resource: 'node.disk', limit, used: usedMb, requested, over: (usedMb + requested - limit) / requested });
  } else if (diskCheck?.ok) {
    disk = { key: diskCheck.key, mb: diskCheck.mb, limitMb: diskCheck.limitMb };
  }
  const base = { nodeId: node.id, allocatable: cap.allocatable, charge, headroom, shortfalls, ...(disk === undefined ? {} : { disk }) };

  const sessions = unitCost.nvencSessions * count;
  if (sessions === 0) return base;
  const gpus = cap.nvencSessions.map((limit, index) => ({ index, limit, used: used.nvenc[index] ?? 0 }));
  const open = gpus.filter((g) => g.used + sessions <= g.limit);
  if (open.length === 0) {
    const roomiest = gpus.reduce<(typeof gpus)[number] | undefined>(
      (a, g) => (a === undefined || g.limit - g.used > a.limit - a.used ? g : a),
      undefined,
    );
    const limit = roomiest?.limit ?? 0;
    const usedSessions = roomiest?.used ?? 0;
    shortfalls.push({
      resource: 'node.nvenc',
      limit,
      used: usedSessions,
      requested: sessions,
      over: (usedSessions + sessions - limit) / sessions,
    });
    return base;
  }
  // Fill the GPU with the fewest free sessions, keeping whole GPUs free for bigger ladders.
  const gpu = open.reduce((a, g) => (g.limit - g.used < a.limit - a.used ? g : a));
  return { ...base, gpuIndex: gpu.index };
}

function closer(a: Candidate, b: Candidate): boolean {
  if (a.shortfalls.length !== b.shortfalls.length) return a.shortfalls.length < b.shortfalls.length;
  return worstExcess(a) < worstExcess(b);
}

function worstExcess(c: Candidate): number {
  return Math.max(...c.shortfalls.map((s) => s.over));
}
