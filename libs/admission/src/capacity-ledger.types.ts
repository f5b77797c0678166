import type { AppLimits, EgressModeSetting, Load, QuotaClass, Runtime, Usage } from '@tally/capacity';

/** What the capacity ledger takes and answers (capacity-ledger.ts). */

export type LedgerOutcome =
  | Readonly<{
      ok: true;
      alreadyHeld: boolean;
      /** The node holding it (another than the placement's when already held). */ nodeId: string;
    }>
  | Readonly<{ ok: false; code: 'quota_exceeded'; resource: `app.${QuotaClass}`; limit: number; used: number; requested: number }>
  | Readonly<{ ok: false; code: 'capacity_exhausted'; resource: string; limit: number; used: number; requested: number; nodeId: string }>
  | Readonly<{
      ok: false;
      code: 'guaranteed';
      heldResource: 'node.ram' | 'node.cpu' | 'node.nic';
      limit: number;
      used: number;
      requested: number;
    }>;

export type HeldReservation = Readonly<{
  id: string;
  appId: string;
  nodeId: string;
  kind: string;
  count: number;
  confirmed: boolean;
  createdAt: number;
}>;

/** An app's policy as the reserve script reads it: caps and guarantees it enforces, and what a guaranteed unit keeps free. */
export type StoredPolicy = Readonly<{
  limits: Partial<Record<QuotaClass, number>>;
  guarantees: Partial<Record<QuotaClass, number>>;
  /** Per guaranteed class, the load one unit keeps free (libs/capacity guaranteeUnitCosts). */
  units: Partial<Record<QuotaClass, Load>>;
  mode: EgressModeSetting;
  /** The app's request and start rates the operator set (the API's rate limiter reads them; the scripts do not). */
  rates?: Readonly<{ requestsPerMinute?: number; startsPerMinute?: number }>;
}>;

/** What the reserve script needs besides the placement: the default caps and the pool guarantees are shares of. */
export type ReserveTerms = Readonly<{
  defaults: AppLimits;
  /** False when restoring work that already runs: no cap or guarantee applies, only the node's budget. */
  enforce: boolean;
  pool: Readonly<{
    allocatable: Load;
    /** Runtimes whose idle load stays free while any guarantee of their classes exists. */
    runtimeHolds: readonly Readonly<{ name: Runtime; classes: readonly QuotaClass[]; idle: Load }>[];
  }>;
}>;

/** JSON has no Infinity; an unlimited class is checked against this. */
export const NO_LIMIT = 1e15;

/** Terms that check caps only (tools and tests that reserve directly): no pool guarantees apply. */
export function capsOnly(caps: AppLimits): ReserveTerms {
  return {
    defaults: caps,
    enforce: true,
    pool: { allocatable: { ramMb: NO_LIMIT, cpuMillicores: NO_LIMIT, nicKbps: NO_LIMIT }, runtimeHolds: [] },
  };
}

/** The pool-wide counters: what reservations hold, what unused guarantees keep free, guarantees per class. */
export type PoolLedger = Readonly<{ used: Load; held: Load; guaranteed: Readonly<Record<QuotaClass, number>> }>;

/** One read of the counters an admission decides on (CapacityLedger.snapshot). */
export type LedgerSnapshot = Readonly<{ usage: Usage; pool?: PoolLedger; held?: HeldReservation }>;
