import { QUOTA_CLASSES, type AppLimits, type QuotaClass } from './app-limits.js';
import type { NodeBudget } from './budget.js';
import type { WorkloadKind } from './costs.js';
import { egressKindOf, type EgressModeSetting } from './egress-mode.js';
import { DEFAULT_MODEL, type CapacityModel } from './model.js';
import { acceptsKind, maxConcurrent, nodeCapacity, unitsThatFit } from './pool.js';
import { addLoad, scaleLoad } from './resources.js';

export type AppQuotaPolicy = Readonly<{
  appId: string;
  /** Share of the fair split relative to other apps; 1 when absent. */
  weight?: number;
  /** Explicit limits set by the operator; they replace the derived ones. */
  limits?: Partial<AppLimits>;
  /** Floors the derived limits, taken out of the pool before the fair split. */
  guaranteed?: Partial<AppLimits>;
  /** Sizes `recordings`: auto is sized on passthrough, the mode most single-publisher rooms get. */
  egressMode?: EgressModeSetting;
}>;

export type QuotaSizing = Readonly<{
  /**
   * How many apps' default quotas one node holds. An app's default is 1/appsPerNode of the pool's
   * largest node, so quotas do not shrink each time an app is created; once more apps exist than
   * fit, everyone's default shrinks in the same proportion so that the sum never passes the pool.
   */
  appsPerNode: number;
  /** WebRTC viewers reserved per stream when sizing `streams`: a room is only useful with its audience. */
  viewersPerStream: number;
}>;

export const DEFAULT_QUOTA_SIZING: QuotaSizing = Object.freeze({ appsPerNode: 2, viewersPerStream: 19 });

export type DerivedQuotas = Readonly<{
  limits: Readonly<Record<string, AppLimits>>;
  /** Configurations that could not all be honoured (explicit limits or guarantees beyond the pool). */
  warnings: readonly string[];
}>;

export type QuotaOptions = Readonly<{ model?: CapacityModel; sizing?: Partial<QuotaSizing> }>;

const EPSILON = 1e-9;

/**
 * Per-app limits, class by class: explicit limits first, then guarantees, then a fair split of the
 * rest. For every class the derived limits fit the pool together (Σ limit / poolUnits ≤ 1).
 */
export function deriveQuotas(nodes: readonly NodeBudget[], apps: readonly AppQuotaPolicy[], options: QuotaOptions = {}): DerivedQuotas {
  const model = options.model ?? DEFAULT_MODEL;
  const sizing = { ...DEFAULT_QUOTA_SIZING, ...options.sizing };
  if (!(sizing.appsPerNode > 0)) throw new RangeError(`appsPerNode must be positive, got ${sizing.appsPerNode}`);
  const warnings: string[] = [];
  const limits = new Map<string, Record<QuotaClass, number>>(apps.map((a) => [a.appId, {} as Record<QuotaClass, number>]));

  for (const cls of QUOTA_CLASSES) {
    const split = splitClass(
      cls,
      apps.map((app) => ({ app, units: nodeUnits(cls, nodes, model, sizing, app.egressMode ?? 'auto') })),
      sizing.appsPerNode,
      warnings,
    );
    for (const [appId, limit] of split) {
      const appLimits = limits.get(appId);
      if (appLimits !== undefined) appLimits[cls] = limit;
    }
  }
  return { limits: Object.fromEntries(limits), warnings };
}

type Claim = Readonly<{ app: AppQuotaPolicy; units: readonly number[] }>;

function splitClass(cls: QuotaClass, claims: readonly Claim[], appsPerNode: number, warnings: string[]): Map<string, number> {
  const result = new Map<string, number>();
  let explicitShare = 0;
  const open: { appId: string; pool: number; wanted: number; guaranteed: number }[] = [];

  for (const { app, units } of claims) {
    const weight = app.weight ?? 1;
    if (!(weight >= 0 && Number.isFinite(weight))) throw new RangeError(`${app.appId}: weight must be ≥ 0, got ${weight}`);
    const pool = units.reduce((a, b) => a + b, 0);
    const explicit = app.limits?.[cls];
    if (explicit !== undefined) {
      result.set(app.appId, explicit);
      explicitShare += pool > 0 ? explicit / pool : explicit > 0 ? Number.POSITIVE_INFINITY : 0;
      continue;
    }
    const g = app.guaranteed?.[cls] ?? 0;
    if (g > pool) warnings.push(`${app.appId}: guaranteed ${cls} ${g} exceeds the pool's ${pool}`);
    if (pool === 0) {
      result.set(app.appId, 0);
      continue;
    }
    // Fractions of the pool: the default is 1/appsPerNode of the largest node, scaled by weight.
    const wanted = (weight * Math.max(...units)) / appsPerNode / pool;
    open.push({ appId: app.appId, pool, wanted, guaranteed: Math.min(g, pool) / pool });
  }

  if (explicitShare > 1 + EPSILON) warnings.push(`explicit ${cls} limits exceed the pool (${explicitShare.toFixed(2)}×)`);
  const rest = Math.max(0, 1 - explicitShare);

  // Water-filling: apps whose guarantee beats their share keep the guarantee; the others share what is left.
  const pinned = new Set<string>();
  let scale = 1;
  for (;;) {
    const pinnedShare = open.filter((o) => pinned.has(o.appId)).reduce((s, o) => s + o.guaranteed, 0);
    if (pinnedShare > rest + EPSILON) {
      warnings.push(`guaranteed ${cls} exceed what is left of the pool; guarantees are scaled down`);
      for (const o of open) result.set(o.appId, pinned.has(o.appId) ? floor((o.guaranteed * rest * o.pool) / pinnedShare) : 0);
      return result;
    }
    const wanted = open.filter((o) => !pinned.has(o.appId)).reduce((s, o) => s + o.wanted, 0);
    scale = wanted > 0 ? Math.min(1, (rest - pinnedShare) / wanted) : 0;
    const newly = open.filter((o) => !pinned.has(o.appId) && o.guaranteed > o.wanted * scale);
    if (newly.length === 0) break;
    for (const o of newly) pinned.add(o.appId);
  }
  for (const o of open) result.set(o.appId, floor((pinned.has(o.appId) ? o.guaranteed : o.wanted * scale) * o.pool));
  return result;
}

function floor(x: number): number {
  return Math.floor(x + EPSILON);
}

/** Per node, how many units of the class's reference workload it can run alone. */
export function nodeUnits(
  cls: QuotaClass,
  nodes: readonly NodeBudget[],
  model: CapacityModel,
  sizing: QuotaSizing,
  egressMode: EgressModeSetting,
): number[] {
  const max = (node: NodeBudget, ...kinds: WorkloadKind[]) => Math.min(...kinds.map((k) => maxConcurrent(k, node, model)));
  return nodes.map((node) => {
    switch (cls) {
      case 'streams':
        return streamsWithAudience(node, model, sizing.viewersPerStream);
      case 'viewers':
        return max(node, 'viewer.webrtc');
      case 'recordings':
        return max(node, egressKindOf(egressMode === 'auto' ? 'passthrough' : egressMode));
      case 'room_composites':
        return max(node, 'egress.room_composite');
      case 'ingresses':
        // Either protocol must fit, so the dearer one sizes the class.
        return max(node, 'ingress.rtmp', 'ingress.whip');
      case 'transcodes':
        return Math.max(maxConcurrent('transcode.cpu', node, model), maxConcurrent('transcode.nvenc', node, model));
      case 'cameras':
        return max(node, 'camera.mjpeg');
      case 'camera_viewers':
        return max(node, 'camera.viewer');
    }
  });
}

function streamsWithAudience(node: NodeBudget, model: CapacityModel, viewers: number): number {
  const cap = nodeCapacity(node, model);
  if (!acceptsKind(cap, 'stream') || (viewers > 0 && !acceptsKind(cap, 'viewer.webrtc'))) return 0;
  const stream = model.costs.stream;
  const audience = scaleLoad(model.costs['viewer.webrtc'], viewers);
  return unitsThatFit({ ...addLoad(stream, audience), nvencSessions: stream.nvencSessions }, cap.allocatable, cap.nvencSessions);
}
