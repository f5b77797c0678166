import { QUOTA_CLASSES, type AppLimits, type QuotaClass } from './app-limits.js';
import type { NodeBudget } from './budget.js';
import type { Runtime } from './costs.js';
import type { CapacityModel } from './model.js';
import { nodeCapacity, unitsThatFit } from './pool.js';
import { addLoad, LOAD_KEYS, scaleLoad, subtractLoad, sumLoads, ZERO_LOAD, type Load, type LoadKey } from './resources.js';

/**
 * Guarantees (floors) partition the pool; limits (caps) do not. A guaranteed unit keeps its class's
 * cost free in the pool while the app does not use it: other apps are admitted only into what is
 * left after every *unused* guarantee, so an app inside its guarantee always fits. The Lua reserve
 * script (libs/admission) applies exactly these rules on the live counters.
 */

/** Per class, what one guaranteed unit keeps free: the dearest workload counting against that class alone. */
export type GuaranteeUnitCosts = Readonly<Record<QuotaClass, Load>>;

/** The runtime a class's workloads need (its idle load is kept free once while any guarantee of it exists). */
export const CLASS_RUNTIME: Readonly<Partial<Record<QuotaClass, Runtime>>> = { recordings: 'egress', room_composites: 'egress' };

export function maxLoad(a: Load, b: Load): Load {
  return {
    ramMb: Math.max(a.ramMb, b.ramMb),
    cpuMillicores: Math.max(a.cpuMillicores, b.cpuMillicores),
    nicKbps: Math.max(a.nicKbps, b.nicKbps),
  };
}

/** Whole units (MB, millicores, kbps rounded up), as the Redis counters hold them. */
export function ceilLoad(a: Load): Load {
  return { ramMb: Math.ceil(a.ramMb), cpuMillicores: Math.ceil(a.cpuMillicores), nicKbps: Math.ceil(a.nicKbps) };
}

export function guaranteeUnitCosts(model: CapacityModel): GuaranteeUnitCosts {
  const c = model.costs;
  const costs: Record<QuotaClass, Load> = {
    streams: c.stream,
    viewers: c['viewer.webrtc'],
    // A Chrome recording also counts against room_composites, whose unit covers it.
    recordings: maxLoad(c['egress.track_composite'], c['egress.track']),
    room_composites: c['egress.room_composite'],
    ingresses: maxLoad(c['ingress.rtmp'], c['ingress.whip']),
    transcodes: maxLoad(c['transcode.cpu'], c['transcode.nvenc']),
    cameras: c['camera.mjpeg'],
    camera_viewers: c['camera.viewer'],
  };
  return Object.fromEntries(QUOTA_CLASSES.map((cls) => [cls, ceilLoad(costs[cls])])) as Record<QuotaClass, Load>;
}

/** The idle load of every runtime that some guarantee in `totals` needs. */
export function runtimeHold(totals: Partial<AppLimits>, model: CapacityModel): Load {
  const runtimes = new Set<Runtime>();
  for (const cls of QUOTA_CLASSES) {
    const runtime = CLASS_RUNTIME[cls];
    if (runtime !== undefined && (totals[cls] ?? 0) > 0) runtimes.add(runtime);
  }
  return ceilLoad(sumLoads([...runtimes].map((r) => model.runtimes[r])));
}

export function sumGuarantees(guarantees: readonly Partial<AppLimits>[]): Partial<Record<QuotaClass, number>> {
  const totals: Partial<Record<QuotaClass, number>> = {};
  for (const g of guarantees) for (const cls of QUOTA_CLASSES) totals[cls] = (totals[cls] ?? 0) + (g[cls] ?? 0);
  return totals;
}

/** What the guarantees keep free in total: every unit at its class's cost, plus each runtime they need once. */
export function guaranteedLoad(guarantees: readonly Partial<AppLimits>[], model: CapacityModel): Load {
  const totals = sumGuarantees(guarantees);
  const units = guaranteeUnitCosts(model);
  return addLoad(sumLoads(QUOTA_CLASSES.map((cls) => scaleLoad(units[cls], totals[cls] ?? 0))), runtimeHold(totals, model));
}

/** The pool guarantees are shares of: every live node's allocatable, summed. */
export function poolAllocatable(nodes: readonly NodeBudget[], model: CapacityModel): Load {
  return sumLoads(nodes.map((n) => nodeCapacity(n, model).allocatable));
}

export type GuaranteeFit = Readonly<{ ok: true }> | Readonly<{ ok: false; cls: QuotaClass; requested: number; room: number }>;

/**
 * Whether `proposed` (one app's guarantees) fits the pool beside every other app's guarantees. A
 * class fits when its units fit what the others and the app's other classes leave, on the pool's
 * sum *and* node by node (a Chrome cannot straddle two nodes). Classes are added in QUOTA_CLASSES
 * order; on failure, names the first class that does not fit beside the ones before it, and how
 * many units of it still would.
 */
export function checkGuarantees(
  nodes: readonly NodeBudget[],
  model: CapacityModel,
  others: readonly Partial<AppLimits>[],
  proposed: Partial<AppLimits>,
): GuaranteeFit {
  const units = guaranteeUnitCosts(model);
  const allocatable = poolAllocatable(nodes, model);
  const otherTotals = sumGuarantees(others);
  const without: Partial<Record<QuotaClass, number>> = {};
  for (const cls of QUOTA_CLASSES) {
    const requested = proposed[cls] ?? 0;
    if (requested === 0) continue;
    const base = guaranteedLoad([...others, without], model);
    const runtime = CLASS_RUNTIME[cls];
    // The runtime's idle load is in `base` already when another guarantee needs the same runtime.
    const runtimeHeld = runtimeHold(sumGuarantees([...others, without]), model).ramMb > 0 && runtime !== undefined;
    const idle = runtime === undefined ? ZERO_LOAD : model.runtimes[runtime];
    const unit = { ...units[cls], nvencSessions: 0 };
    const bySum = unitsThatFit(unit, subtractLoad(allocatable, base), [], runtimeHeld ? ZERO_LOAD : idle);
    const byNode = nodes.reduce((sum, n) => sum + unitsThatFit(unit, nodeCapacity(n, model).allocatable, [], idle), 0);
    const room = Math.max(0, Math.min(bySum, byNode - (otherTotals[cls] ?? 0)));
    if (requested > room) return { ok: false, cls, requested, room };
    without[cls] = requested;
  }
  return { ok: true };
}

/** One app's unused guarantee at its classes' costs. */
export function unusedGuarantee(
  guarantees: Partial<AppLimits>,
  units: GuaranteeUnitCosts,
  used: Readonly<Partial<Record<QuotaClass, number>>>,
): Load {
  return sumLoads(QUOTA_CLASSES.map((cls) => scaleLoad(units[cls], Math.max(0, (guarantees[cls] ?? 0) - (used[cls] ?? 0)))));
}

/** What `count` more units counting against `classes` take from the app's own unused guarantee. */
export type GuaranteeTake = Readonly<{
  /** Every class stays within its guarantee. */
  within: boolean;
  /** The part of the app's unused guarantee these units consume. */
  taken: Load;
}>;

export function guaranteeTake(
  guarantees: Partial<AppLimits>,
  units: GuaranteeUnitCosts,
  used: Readonly<Partial<Record<QuotaClass, number>>>,
  classes: readonly QuotaClass[],
  count: number,
): GuaranteeTake {
  let within = true;
  let taken = ZERO_LOAD;
  for (const cls of classes) {
    const free = Math.max(0, (guarantees[cls] ?? 0) - (used[cls] ?? 0));
    if (count > free) within = false;
    taken = addLoad(taken, scaleLoad(units[cls], Math.min(count, free)));
  }
  return { within, taken };
}

/** The pool-wide counters the guarantee rule reads. */
export type GuaranteeLedger = Readonly<{
  /** Σ allocatable of the live pool. */
  allocatable: Load;
  /** What every reservation holds (workloads and runtimes), pool-wide. */
  used: Load;
  /** Every app's unused guarantee at class costs. */
  held: Load;
  /**
   * The idle load of every runtime some guarantee needs that is down on the node and that this
   * request does not start (a runtime that runs, or that the request starts, is paid for already).
   */
  runtimeHold: Load;
}>;

export type GuaranteeRefusal = Readonly<{
  code: 'capacity_exhausted';
  resource: 'pool.guaranteed';
  /** The node resource the other apps' unused guarantees keep free. */
  heldResource: 'node.ram' | 'node.cpu' | 'node.nic';
  /** What the pool leaves for work outside guarantees, used, and this request's charge, in that resource's unit. */
  limit: number;
  used: number;
  requested: number;
}>;

export type GuaranteeGuard = Readonly<{ ok: true; charge: Load }> | Readonly<{ ok: false; refusal: GuaranteeRefusal }>;

const HELD_RESOURCE: Readonly<Record<LoadKey, GuaranteeRefusal['heldResource']>> = {
  ramMb: 'node.ram',
  cpuMillicores: 'node.cpu',
  nicKbps: 'node.nic',
};

/**
 * The guarantee rule. Work inside the app's own guarantee is charged at least what the guarantee
 * kept free for it (so giving it back restores the hold exactly) and needs no more than its node.
 * Any other work must fit the pool after every other unused guarantee and guaranteed runtime.
 * `runtimeIdle` is the idle load this reservation starts (zero when its runtime already runs).
 */
export function guardGuarantees(ledger: GuaranteeLedger, take: GuaranteeTake, workload: Load, runtimeIdle: Load): GuaranteeGuard {
  const charged = maxLoad(workload, take.taken);
  const charge = addLoad(charged, runtimeIdle);
  const covered = LOAD_KEYS.every((k) => workload[k] <= take.taken[k]);
  if (take.within && covered) return { ok: true, charge };
  for (const k of LOAD_KEYS) {
    if (charge[k] <= 0) continue;
    const keptFree = ledger.held[k] - take.taken[k] + ledger.runtimeHold[k];
    if (ledger.used[k] + charge[k] + keptFree > ledger.allocatable[k]) {
      return {
        ok: false,
        refusal: {
          code: 'capacity_exhausted',
          resource: 'pool.guaranteed',
          heldResource: HELD_RESOURCE[k],
          limit: Math.max(0, ledger.allocatable[k] - keptFree),
          used: ledger.used[k],
          requested: charge[k],
        },
      };
    }
  }
  return { ok: true, charge };
}
