import { QUOTA_CLASSES, type AppLimits, type QuotaClass } from './app-limits.js';
import type { NodeBudget } from './budget.js';
import type { WorkloadKind } from './costs.js';
import { egressKindOf, type EgressModeSetting } from './egress-mode.js';
import { DEFAULT_MODEL, type CapacityModel } from './model.js';
import { acceptsKind, maxConcurrent, nodeCapacity, unitsThatFit } from './pool.js';
import { addLoad, scaleLoad } from './resources.js';

export type AppQuotaPolicy = Readonly<{
  appId: string;
  /** Caps the operator set; they replace the derived ones class by class. */
  limits?: Partial<AppLimits>;
  /** Floors the operator set: capacity kept free for the app while it does not use it (see guarantees.ts). */
  guarantees?: Partial<AppLimits>;
  /** Sizes `recordings`: auto is sized on passthrough, the mode most single-publisher rooms get. */
  egressMode?: EgressModeSetting;
  /** Request and start rates per minute the operator set; travels with the policy to every API replica. */
  rateLimits?: Readonly<{ requestsPerMinute?: number; startsPerMinute?: number }>;
}>;

export type QuotaSizing = Readonly<{
  /**
   * How many apps share one node in product.md's per-app guidance ("a shared 8 GB node"). An app's
   * default cap is 1/appsPerNode of what the pool's largest node runs of the class, the same however
   * many apps exist: caps may sum to more than the pool, and node admission protects the hardware.
   */
  appsPerNode: number;
  /** WebRTC viewers reserved per stream when sizing `streams`: a room is only useful with its audience. */
  viewersPerStream: number;
}>;

export const DEFAULT_QUOTA_SIZING: QuotaSizing = Object.freeze({ appsPerNode: 2, viewersPerStream: 19 });

export type QuotaOptions = Readonly<{ model?: CapacityModel; sizing?: Partial<QuotaSizing> }>;

const EPSILON = 1e-9;

/**
 * The default cap per class for an app recording in `egressMode`: a share of ONE node (the pool's
 * largest for that class), never a share of the pool, so creating apps never shrinks anyone's cap.
 */
export function defaultLimits(nodes: readonly NodeBudget[], egressMode: EgressModeSetting = 'auto', options: QuotaOptions = {}): AppLimits {
  const model = options.model ?? DEFAULT_MODEL;
  const sizing = { ...DEFAULT_QUOTA_SIZING, ...options.sizing };
  if (!(sizing.appsPerNode > 0)) throw new RangeError(`appsPerNode must be positive, got ${sizing.appsPerNode}`);
  return Object.fromEntries(
    QUOTA_CLASSES.map((cls) => {
      const largest = Math.max(0, ...nodeUnits(cls, nodes, model, sizing, egressMode));
      return [cls, shareOfNode(largest, sizing.appsPerNode)];
    }),
  ) as Record<QuotaClass, number>;
}

/**
 * An app's share of what one node runs, rounded down, but never below 1 where the node runs the class
 * at all: on a small host the share of a class it runs once would otherwise be 0 (every start a 429 on
 * a host that could run it); node admission still protects the hardware.
 */
export function shareOfNode(unitsOnNode: number, appsPerNode: number): number {
  if (unitsOnNode < 1 - EPSILON) return 0;
  return Math.max(1, Math.floor(unitsOnNode / appsPerNode + EPSILON));
}

/** The limit admission enforces: the explicit cap, else the default; never below the app's guarantee. */
export function effectiveLimits(policy: Pick<AppQuotaPolicy, 'limits' | 'guarantees'>, defaults: AppLimits): AppLimits {
  return Object.fromEntries(
    QUOTA_CLASSES.map((cls) => [cls, Math.max(policy.limits?.[cls] ?? defaults[cls], policy.guarantees?.[cls] ?? 0)]),
  ) as Record<QuotaClass, number>;
}

/** Every app's effective limits (listings and gauges; admission reads one app's policy only). */
export function limitsOfApps(
  nodes: readonly NodeBudget[],
  apps: readonly AppQuotaPolicy[],
  options: QuotaOptions = {},
): Readonly<Record<string, AppLimits>> {
  const byMode = new Map<EgressModeSetting, AppLimits>();
  const defaultsFor = (mode: EgressModeSetting): AppLimits => {
    const known = byMode.get(mode);
    if (known) return known;
    const computed = defaultLimits(nodes, mode, options);
    byMode.set(mode, computed);
    return computed;
  };
  return Object.fromEntries(apps.map((app) => [app.appId, effectiveLimits(app, defaultsFor(app.egressMode ?? 'auto'))]));
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
