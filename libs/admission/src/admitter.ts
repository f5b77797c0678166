import {
  type AppLimits,
  type AppQuotaPolicy,
  baseLoadOf,
  type CapacityModel,
  type Load,
  deriveQuotas,
  fits,
  headroom,
  type NodeBudget,
  type NodeHeadroom,
  type Refusal,
  unlimited,
  type WorkloadCost,
  type WorkloadKind,
  ZERO_LOAD,
} from '@tally/capacity';
import { CapacityLedger } from './capacity-ledger.js';

export type PoolSource = Readonly<{
  /** Every node with a live heartbeat: the pool that quotas are shares of (a drain does not shrink them). */
  liveNodes(): Promise<NodeBudget[]>;
  /** The nodes that take new work now (live heartbeat, status active). */
  schedulableNodes(): Promise<NodeBudget[]>;
  /** Every app's quota policy: explicit limits, weight, egress mode. */
  appPolicies(): Promise<AppQuotaPolicy[]>;
}>;

export type Admitted = Readonly<{ ok: true; nodeId: string }>;
export type Refused = Readonly<{ ok: false; refusal: Refusal }>;

/** Per-admission refinements: a node the workload must share (a viewer with its camera) and a per-instance cost. */
export type AdmitOptions = Readonly<{ nodeId?: string; unitCost?: WorkloadCost }>;

export type AdmitterOptions = Readonly<{
  /** Sees every admission decision once (metrics); it must not throw, and cannot change the decision. */
  onDecision?: (kind: WorkloadKind, result: Admitted | Refused) => void;
}>;

/** Placement decided on a snapshot can lose a race for the last unit of a node; it is decided again this often. */
const ATTEMPTS = 4;

/**
 * Admission for any workload kind: the app's derived (or explicit) quota and
 * one node's budget, decided by libs/capacity and applied atomically by the ledger.
 */
export class Admitter {
  constructor(
    private readonly ledger: CapacityLedger,
    private readonly pool: PoolSource,
    readonly model: CapacityModel,
    private readonly options: AdmitterOptions = {},
  ) {}

  async limitsFor(appId: string): Promise<AppLimits> {
    const mine = (await this.limitsForAll([appId]))[appId];
    if (!mine) throw new Error(`no derived limits for ${appId}`);
    return mine;
  }

  /** Every app's effective limits in one derivation (the shares depend on all apps at once). */
  async limitsForAll(include: readonly string[] = []): Promise<Readonly<Record<string, AppLimits>>> {
    const policies = await this.pool.appPolicies();
    const known = new Set(policies.map((p) => p.appId));
    const all = [...policies, ...include.filter((id) => !known.has(id)).map((appId) => ({ appId }))];
    return deriveQuotas(await this.pool.liveNodes(), all, { model: this.model }).limits;
  }

  /** Takes `count` units of `kind` for the app under reservation `id`, or says which limit refused. */
  async admit(
    id: string,
    appId: string,
    kind: WorkloadKind,
    count: number,
    lapseAfterMs: number,
    options: AdmitOptions = {},
  ): Promise<Admitted | Refused> {
    const result = await this.decide(id, appId, kind, count, lapseAfterMs, options);
    try {
      this.options.onDecision?.(kind, result);
    } catch {
      // The reservation is already taken or refused in Redis; a failing observer must not undo that.
    }
    return result;
  }

  private async decide(
    id: string,
    appId: string,
    kind: WorkloadKind,
    count: number,
    lapseAfterMs: number,
    options: AdmitOptions,
  ): Promise<Admitted | Refused> {
    const held = await this.ledger.held(id);
    if (held) return { ok: true, nodeId: held.nodeId };
    const nodes = await this.pool.schedulableNodes();
    const limits = await this.limitsFor(appId);
    for (let attempt = 1; ; attempt += 1) {
      const usage = await this.ledger.usage(
        nodes.map((n) => n.id),
        [appId],
      );
      const decision = fits({ nodes, model: this.model, usage }, { appId, limits, kind, count, ...options });
      if (!decision.ok) return { ok: false, refusal: decision.refusal };
      const { placement } = decision;
      const node = nodes.find((n) => n.id === placement.reservation.nodeId);
      const outcome = await this.ledger.reserve(id, placement, limits, node?.gpus ?? [], lapseAfterMs);
      if (outcome.ok) return { ok: true, nodeId: placement.reservation.nodeId };
      if (outcome.code === 'quota_exceeded' || attempt === ATTEMPTS) {
        const { code, limit, used, requested } = outcome;
        const refusal =
          outcome.code === 'quota_exceeded'
            ? { code, resource: outcome.resource, limit, used, requested }
            : {
                code: 'capacity_exhausted' as const,
                resource: outcome.resource as Extract<Refusal, { code: 'capacity_exhausted' }>['resource'],
                limit,
                used,
                requested,
                nodeId: outcome.nodeId,
              };
        return { ok: false, refusal: refusal as Refusal };
      }
    }
  }

  /**
   * Takes back a reservation for work that is already running (its reservation was lost, e.g. Redis
   * restarted empty): no quota applies, since refusing would not stop it, but a node must hold it.
   * Pinned to `options.nodeId`, any live node may hold it (a draining node keeps what it runs);
   * unpinned, a schedulable one. True when this call took it; false when no node has room or the id
   * already holds a reservation (a pending one is its creator's to confirm).
   */
  async restore(id: string, appId: string, kind: WorkloadKind, count: number, options: AdmitOptions = {}): Promise<boolean> {
    const nodes = options.nodeId === undefined ? await this.pool.schedulableNodes() : await this.pool.liveNodes();
    const usage = await this.ledger.usage(
      nodes.map((n) => n.id),
      [appId],
    );
    const limits = unlimited();
    const decision = fits({ nodes, model: this.model, usage }, { appId, limits, kind, count, ...options });
    if (!decision.ok) return false;
    const node = nodes.find((n) => n.id === decision.placement.reservation.nodeId);
    const outcome = await this.ledger.reserve(id, decision.placement, limits, node?.gpus ?? [], 60_000);
    if (!outcome.ok || outcome.alreadyHeld) return false;
    return this.ledger.confirm(id);
  }

  /** Would `count` units of `kind` be admitted for the app right now? Takes nothing. */
  async check(
    appId: string,
    kind: WorkloadKind,
    count: number,
  ): Promise<Readonly<{ admitted: true; nodeId: string }> | Readonly<{ admitted: false; refusal: Refusal }>> {
    const nodes = await this.pool.schedulableNodes();
    const limits = await this.limitsFor(appId);
    const usage = await this.ledger.usage(
      nodes.map((n) => n.id),
      [appId],
    );
    const decision = fits({ nodes, model: this.model, usage }, { appId, limits, kind, count });
    return decision.ok ? { admitted: true, nodeId: decision.placement.reservation.nodeId } : { admitted: false, refusal: decision.refusal };
  }

  /** Per schedulable node: its base load, free capacity, and how many more of each kind fit there now. */
  async headroom(): Promise<(NodeHeadroom & Readonly<{ baseLoad: Load }>)[]> {
    const nodes = await this.pool.schedulableNodes();
    const usage = await this.ledger.usage(
      nodes.map((n) => n.id),
      [],
    );
    const baseLoads = new Map(nodes.map((n) => [n.id, baseLoadOf(n, this.model)]));
    return headroom({ nodes, model: this.model, usage }).map((h) => ({ ...h, baseLoad: baseLoads.get(h.nodeId) ?? ZERO_LOAD }));
  }

  /** Units the app holds per quota class. */
  async appUsage(appId: string): Promise<Readonly<Record<string, number>>> {
    return (await this.ledger.usage([], [appId])).apps[appId] ?? {};
  }
}
