import type { AppQuotaPolicy, DiskRole, Load, NodeBudget, QuotaClass, Refusal, WorkloadCost, WorkloadKind } from '@tally/capacity';
import type { PolicyCache } from './policy-cache.js';

/** What the Admitter reads from and answers (admitter.ts). */

/**
 * How current a read of the pool must be. A source may answer from a copy a moment old (nodes
 * change at heartbeat pace); `fresh` asks for what the registry holds now. Admission decides every
 * refusal on fresh reads, so a copy can only make it admit what the pool admitted a moment ago.
 */
export type PoolRead = Readonly<{ fresh?: boolean }>;

export type PoolSource = Readonly<{
  /** Every node with a live heartbeat: default caps follow its largest node; guarantees are shares of its sum. */
  liveNodes(read?: PoolRead): Promise<NodeBudget[]>;
  /** The nodes that take new work now (live heartbeat, status active). */
  schedulableNodes(read?: PoolRead): Promise<NodeBudget[]>;
  /** One app's policy (explicit caps, guarantees, egress mode); undefined for an unknown app. */
  appPolicy(appId: string): Promise<AppQuotaPolicy | undefined>;
  /** Every app's policy: for listings, gauges and re-syncing the ledger, never for one admission. */
  appPolicies(): Promise<AppQuotaPolicy[]>;
}>;

/** A PoolSource's app half from one list (tools and tests): `appPolicy` finds the app in it. */
export function policiesFrom(list: () => Promise<AppQuotaPolicy[]>): Pick<PoolSource, 'appPolicy' | 'appPolicies'> {
  return { appPolicies: list, appPolicy: async (appId) => (await list()).find((p) => p.appId === appId) };
}

export type GuaranteeHeadroom = Readonly<{
  guaranteed: Readonly<Record<QuotaClass, number>>;
  allocatable: Load;
  promised: Load;
  unused: Load;
  free: Load;
}>;

export type Admitted = Readonly<{ ok: true; nodeId: string }>;
export type Refused = Readonly<{ ok: false; refusal: Refusal }>;

/**
 * Per-admission refinements: a node the workload must share (a viewer with its camera), a
 * per-instance cost, and the filesystem role it writes to when not its kind's (live HLS).
 */
export type AdmitOptions = Readonly<{ nodeId?: string; unitCost?: WorkloadCost; diskRole?: DiskRole }>;

export type AdmitterOptions = Readonly<{
  /** Sees every admission decision once (metrics); it must not throw, and cannot change the decision. */
  onDecision?: (kind: WorkloadKind, result: Admitted | Refused) => void;
  /**
   * Apps' policies kept in process (a process with an invalidation bus: its owner forgets an app's
   * entry on every replica when the app's policy changes). Without it every admission reads the
   * policy from the ledger.
   */
  policies?: PolicyCache;
  /** The clock the shared reads' ages are measured on (tests move it). */
  now?: () => number;
}>;
