import type { WorkloadKind } from './costs.js';
import type { NodeDisk } from './disk.js';
import { load, ZERO_LOAD, type Load } from './resources.js';

export type GpuBudget = Readonly<{ nvencSessions: number; name?: string }>;

/** What a node has, as its agent measures it (or as config overrides it). */
export type NodeBudget = Readonly<{
  id: string;
  cpuMillicores: number;
  ramMb: number;
  nicMbps: number;
  gpus: readonly GpuBudget[];
  /** Replaces components of the model's base load for this node (a joined node runs no postgres). */
  baseLoad?: Partial<BaseLoad>;
  /** Kinds this node may host; all kinds when absent. */
  accepts?: readonly WorkloadKind[];
  /** The filesystems Tally writes media to, as last measured; writers are admitted against them. */
  disks?: readonly NodeDisk[];
}>;

export const BASE_LOAD_COMPONENTS = ['system', 'livekitServer', 'redis', 'postgres', 'api', 'worker', 'agent', 'ingressIdle'] as const;
export type BaseLoadComponent = (typeof BASE_LOAD_COMPONENTS)[number];

/** What a node spends before it hosts any workload. */
export type BaseLoad = Readonly<Record<BaseLoadComponent, Load>>;

/** An all-in-one origin, from product.md (`est.` = not measured there). ≈ 1.7 GB, 0.3 core. */
export const DEFAULT_BASE_LOAD: BaseLoad = Object.freeze({
  system: load(936, 200), // host idle, measured; CPU is a reserve for the kernel and sshd (est.)
  livekitServer: load(77, 10),
  redis: load(64, 10), // est.
  postgres: load(128, 20), // est.
  api: load(118, 20), // idle PSS of the built bundle (node --max-semi-space-size=8 dist/api.js), bench:base-load
  worker: load(108, 20), // idle PSS of the built bundle, bench:base-load
  agent: load(42, 10), // idle PSS of the built bundle, bench:base-load
  ingressIdle: load(270, 10),
});

/** Base-load overrides for a node that joined an origin: the control plane stays on the origin. */
export const JOINED_NODE_BASE_LOAD: Partial<BaseLoad> = Object.freeze({
  redis: ZERO_LOAD,
  postgres: ZERO_LOAD,
  api: ZERO_LOAD,
  worker: ZERO_LOAD,
});

/** The typical origin of product.md: 8 vCPU, 8 GB, ~1 Gbps, no GPU. */
export const DEFAULT_NODE_BUDGET: NodeBudget = Object.freeze({
  id: 'origin',
  cpuMillicores: 8_000,
  ramMb: 8_192,
  nicMbps: 1_000,
  gpus: [],
});
