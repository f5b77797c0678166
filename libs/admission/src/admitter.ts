import {
  type AppLimits,
  type AppQuotaPolicy,
  baseLoadOf,
  addLoad,
  checkGuarantees,
  guaranteedLoad,
  LOAD_KEYS,
  guaranteeTake,
  guardGuarantees,
  quotaClassesOf,
  runtimeHold,
  subtractLoad,
  type GuaranteeFit,
  CLASS_RUNTIME,
  type CapacityModel,
  fits,
  headroom,
  limitsOfApps,
  type Load,
  type NodeBudget,
  type NodeHeadroom,
  QUOTA_CLASSES,
  type Refusal,
  RUNTIMES,
  type Usage,
  unlimited,
  type WorkloadKind,
  ZERO_LOAD,
} from '@tally/capacity';
import { fromStoredPolicy, toStoredPolicy } from './app-policy.js';
import { CapacityLedger } from './capacity-ledger.js';
import { AdmissionInputs, type NodeIds } from './admission-inputs.js';
import { RecentReads } from './recent-reads.js';
import type { LedgerOutcome, LedgerSnapshot, ReserveTerms } from './capacity-ledger.types.js';
import type { AdmitOptions, Admitted, AdmitterOptions, GuaranteeHeadroom, PoolRead, PoolSource, Refused } from './admitter.types.js';

type CheckResult = Readonly<{ admitted: true; nodeId: string }> | Readonly<{ admitted: false; refusal: Refusal }>;

/** Placement decided on a snapshot can lose a race for the last unit of a node; it is decided again this often. */
const ATTEMPTS = 4;
/** How old the nodes' counters a first placement attempt is chosen from may be (the reserve script has the last word). */
const NODE_USAGE_FRESH_MS = 250;
/**
 * How old the counters a `check` answers "admitted" from may be (ADR 0018): what another replica
 * or the worker reserved in that time may be missing. A refusal is always decided on a fresh read,
 * and a write through this process's ledger makes its own next check read again.
 */
export const CHECK_FRESH_MS = 100;
/** Shared check reads kept at most (one per app and node list); older ones are dropped past this. */
const CHECK_READS_KEPT = 1_000;
/** Shared node-usage reads kept at most (one per node list). */
const NODE_USAGE_READS_KEPT = 16;

/** One admission's arguments, as `admit` takes them. */
type Admission = Readonly<{ id: string; appId: string; kind: WorkloadKind; count: number; lapseAfterMs: number; options: AdmitOptions }>;

/**
 * Admission for any workload kind: the app's cap and guarantee and one node's budget, decided by
 * libs/capacity and applied atomically by the ledger. Reads one app's policy per admission (in
 * process, or the ledger's copy of every app's), and the pool-wide sums of guarantees the ledger
 * keeps, so its cost does not grow with the number of apps. The reserve script reads the app's
 * policy and the pool's counters itself: a copy held in process can only make the snapshot
 * decision stale, never the reservation; refusals are decided again on fresh reads.
 */
export class Admitter {
  private readonly nodeUsageReads: RecentReads<Omit<Usage, 'apps'>>;
  private readonly checkReads: RecentReads<LedgerSnapshot>;
  private readonly inputs: AdmissionInputs;
  private readonly now: () => number;

  constructor(
    private readonly ledger: CapacityLedger,
    private readonly pool: PoolSource,
    readonly model: CapacityModel,
    private readonly options: AdmitterOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.nodeUsageReads = new RecentReads(NODE_USAGE_FRESH_MS, NODE_USAGE_READS_KEPT, this.now);
    this.checkReads = new RecentReads(CHECK_FRESH_MS, CHECK_READS_KEPT, this.now);
    this.inputs = new AdmissionInputs(model);
  }

  /** The app's policy: in process, the ledger's copy, or the source's (stored in the ledger for the next admission). */
  async policyOf(appId: string, read: PoolRead = {}): Promise<AppQuotaPolicy> {
    const cache = this.options.policies;
    const hit = read.fresh ? undefined : cache?.get(appId);
    if (hit) return hit;
    const generation = cache?.begin() ?? 0;
    const policy = await this.readPolicy(appId);
    if (policy) cache?.remember(appId, policy, generation);
    return policy ?? { appId };
  }

  private async readPolicy(appId: string): Promise<AppQuotaPolicy | undefined> {
    const stored = await this.ledger.policy(appId);
    if (stored) return fromStoredPolicy(appId, stored);
    const fresh = await this.pool.appPolicy(appId);
    if (!fresh) return undefined;
    await this.ledger.writePolicy(appId, toStoredPolicy(fresh, this.model));
    return fresh;
  }

  /** Copies the app's current policy into the ledger (after it changed), or drops it (app deleted). */
  async syncPolicy(appId: string): Promise<void> {
    const policy = await this.pool.appPolicy(appId);
    await this.ledger.writePolicy(appId, policy === undefined ? undefined : toStoredPolicy(policy, this.model));
  }

  /** Copies every app's policy into the ledger: at startup, so guarantees hold before their app admits anything. */
  async syncAllPolicies(): Promise<number> {
    const policies = await this.pool.appPolicies();
    for (const policy of policies) await this.ledger.writePolicy(policy.appId, toStoredPolicy(policy, this.model));
    return policies.length;
  }

  /**
   * Writes back the ledger's copy of every app that has a guarantee and lost it (Redis restarted
   * empty): a guarantee must hold even for an app that admits nothing. Returns how many it restored.
   */
  async restoreGuaranteePolicies(): Promise<number> {
    let restored = 0;
    for (const policy of await this.pool.appPolicies()) {
      if (!Object.values(policy.guarantees ?? {}).some((g) => g > 0) || (await this.ledger.policy(policy.appId))) continue;
      await this.ledger.writePolicy(policy.appId, toStoredPolicy(policy, this.model));
      restored += 1;
    }
    return restored;
  }

  async limitsFor(appId: string): Promise<AppLimits> {
    const [policy, nodes] = await Promise.all([this.policyOf(appId), this.pool.liveNodes()]);
    return this.inputs.limits(policy, this.inputs.defaults(nodes, policy.egressMode));
  }

  /** Every app's effective limits (listings and gauges). */
  async limitsForAll(): Promise<Readonly<Record<string, AppLimits>>> {
    const [policies, nodes] = await Promise.all([this.pool.appPolicies(), this.pool.liveNodes()]);
    return limitsOfApps(nodes, policies, { model: this.model });
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
    const request: Admission = { id, appId, kind, count, lapseAfterMs, options };
    // Decided on what the process holds; a refusal is decided again on fresh reads (it may be the copy's).
    const first = await this.decideOn({}, request);
    const result = first.ok ? first : await this.decideOn({ fresh: true }, request);
    try {
      this.options.onDecision?.(kind, result);
    } catch {
      // The reservation is already taken or refused in Redis; a failing observer must not undo that.
    }
    return result;
  }

  private async decideOn(read: PoolRead, { id, appId, kind, count, lapseAfterMs, options }: Admission): Promise<Admitted | Refused> {
    const [nodes, live, policy] = await Promise.all([
      this.pool.schedulableNodes(read),
      this.pool.liveNodes(read),
      this.policyOf(appId, read),
    ]);
    const defaults = this.inputs.defaults(live, policy.egressMode);
    const limits = this.inputs.limits(policy, defaults);
    const terms = this.terms(defaults, live, true);
    const nodeIds = this.inputs.nodeIds(nodes);
    for (let attempt = 1; ; attempt += 1) {
      // First from the nodes' counters as read a moment ago (shared by concurrent admissions): the
      // reserve script checks the cap, the guarantees and the node against the live counters, and
      // says if this id already holds a reservation. Later attempts read everything now.
      let usage: Usage;
      if (attempt === 1 && !read.fresh) {
        usage = { ...(await this.recentNodeUsage(nodeIds)), apps: {} };
      } else {
        const snapshot = await this.ledger.snapshot(nodeIds.ids, [appId], { reservation: id });
        if (snapshot.held) return { ok: true, nodeId: snapshot.held.nodeId };
        usage = snapshot.usage;
      }
      const decision = fits({ nodes, model: this.model, usage }, { appId, limits, kind, count, ...options });
      if (!decision.ok) return { ok: false, refusal: decision.refusal };
      const { placement } = decision;
      const node = nodes.find((n) => n.id === placement.reservation.nodeId);
      const outcome = await this.ledger.reserve(id, placement, terms, node?.gpus ?? [], lapseAfterMs);
      if (outcome.ok) return { ok: true, nodeId: outcome.nodeId };
      // Only a node's counters move between the snapshot and the script; the other refusals are final.
      if (outcome.code !== 'capacity_exhausted' || attempt === ATTEMPTS) return { ok: false, refusal: toRefusal(outcome) };
    }
  }

  /** The nodes' and filesystems' counters read at most NODE_USAGE_FRESH_MS ago; concurrent callers share one read. */
  private recentNodeUsage(nodeIds: NodeIds): Promise<Omit<Usage, 'apps'>> {
    return this.nodeUsageReads.get(nodeIds.key, () =>
      this.ledger.snapshot(nodeIds.ids, []).then(({ usage }) => ({ nodes: usage.nodes, ...(usage.disks ? { disks: usage.disks } : {}) })),
    );
  }

  /**
   * Takes back a reservation for work that is already running (its reservation was lost, e.g. Redis
   * restarted empty): no cap or guarantee applies, since refusing would not stop it, but a node must
   * hold it. Pinned to `options.nodeId`, any live node may hold it (a draining node keeps what it runs);
   * unpinned, a schedulable one. True when this call took it; false when no node has room or the id
   * already holds a reservation (a pending one is its creator's to confirm).
   */
  async restore(id: string, appId: string, kind: WorkloadKind, count: number, options: AdmitOptions = {}): Promise<boolean> {
    const [nodes, live] = await Promise.all([
      options.nodeId === undefined ? this.pool.schedulableNodes() : this.pool.liveNodes(),
      this.pool.liveNodes(),
    ]);
    await this.policyOf(appId);
    const usage = await this.ledger.usage(
      nodes.map((n) => n.id),
      [appId],
    );
    const limits = unlimited();
    const decision = fits({ nodes, model: this.model, usage }, { appId, limits, kind, count, ...options, restoring: true });
    if (!decision.ok) return false;
    const node = nodes.find((n) => n.id === decision.placement.reservation.nodeId);
    const outcome = await this.ledger.reserve(id, decision.placement, this.terms(limits, live, false), node?.gpus ?? [], 60_000);
    if (!outcome.ok || outcome.alreadyHeld) return false;
    return this.ledger.confirm(id);
  }

  /** Would `count` units of `kind` be admitted for the app right now (cap, guarantees, node)? Takes nothing. */
  async check(appId: string, kind: WorkloadKind, count: number): Promise<CheckResult> {
    const first = await this.checkOn({}, appId, kind, count);
    if (first.admitted) return first;
    return this.checkOn({ fresh: true }, appId, kind, count);
  }

  private async checkOn(read: PoolRead, appId: string, kind: WorkloadKind, count: number): Promise<CheckResult> {
    const [nodes, live, policy] = await Promise.all([
      this.pool.schedulableNodes(read),
      this.pool.liveNodes(read),
      this.policyOf(appId, read),
    ]);
    const limits = this.inputs.limits(policy, this.inputs.defaults(live, policy.egressMode));
    const nodeIds = this.inputs.nodeIds(nodes);
    const snapshot = await (read.fresh ? this.ledger.snapshot(nodeIds.ids, [appId], { pool: true }) : this.recentCheckRead(nodeIds, appId));
    const { usage } = snapshot;
    const pool = snapshot.pool!;
    const decision = fits({ nodes, model: this.model, usage }, { appId, limits, kind, count });
    if (!decision.ok) return { admitted: false, refusal: decision.refusal };
    const { placement } = decision;
    // The same guarantee rule the reserve script applies (guardGuarantees), on this snapshot.
    const take = guaranteeTake(policy.guarantees ?? {}, this.inputs.unitCosts, usage.apps[appId] ?? {}, quotaClassesOf(kind), count);
    const runtime = placement.runtime;
    const running = runtime !== undefined || (usage.nodes[placement.reservation.nodeId]?.runtimes.egress ?? 0) > 0;
    const guard = guardGuarantees(
      {
        allocatable: this.inputs.allocatable(live),
        used: pool.used,
        held: pool.held,
        runtimeHold: running ? ZERO_LOAD : runtimeHold(pool.guaranteed, this.model),
      },
      take,
      placement.workload,
      subtractLoad(placement.charge, placement.workload),
    );
    if (!guard.ok) return { admitted: false, refusal: guard.refusal };
    return { admitted: true, nodeId: placement.reservation.nodeId };
  }

  /**
   * The app's, the nodes' and the pool's counters as read at most CHECK_FRESH_MS ago and since this
   * process's last write to the ledger; concurrent checks share one read.
   */
  private recentCheckRead(nodeIds: NodeIds, appId: string): Promise<LedgerSnapshot> {
    return this.checkReads.get(
      `${appId}|${nodeIds.key}`,
      () => this.ledger.snapshot(nodeIds.ids, [appId], { pool: true }),
      this.ledger.writeCount,
    );
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

  /**
   * The partition of the live pool: Σ guarantees per class, what they promise (their units at class
   * cost plus guaranteed runtimes), the part not in use, and what is free for work outside them.
   */
  async guaranteeHeadroom(): Promise<GuaranteeHeadroom> {
    const [nodes, pool] = await Promise.all([this.pool.liveNodes(), this.ledger.pool()]);
    const allocatable = this.inputs.allocatable(nodes);
    const unused = addLoad(pool.held, runtimeHold(pool.guaranteed, this.model));
    const free = Object.fromEntries(LOAD_KEYS.map((k) => [k, Math.max(0, allocatable[k] - pool.used[k] - unused[k])])) as Load;
    return { guaranteed: pool.guaranteed, allocatable, promised: guaranteedLoad([pool.guaranteed], this.model), unused, free };
  }

  /** Judges one app's proposed guarantees beside the others' against the live pool (loaded once, now). */
  async guaranteeFit(): Promise<(others: readonly Partial<AppLimits>[], proposed: Partial<AppLimits>) => GuaranteeFit> {
    const nodes = await this.pool.liveNodes();
    return (others, proposed) => checkGuarantees(nodes, this.model, others, proposed);
  }

  /** Units the app holds per quota class. */
  async appUsage(appId: string): Promise<Readonly<Record<string, number>>> {
    return (await this.ledger.usage([], [appId])).apps[appId] ?? {};
  }

  private terms(defaults: AppLimits, live: readonly NodeBudget[], enforce: boolean): ReserveTerms {
    return {
      defaults,
      enforce,
      pool: {
        allocatable: this.inputs.allocatable(live),
        runtimeHolds: RUNTIMES.map((runtime) => ({
          name: runtime,
          classes: QUOTA_CLASSES.filter((cls) => CLASS_RUNTIME[cls] === runtime),
          idle: this.model.runtimes[runtime],
        })),
      },
    };
  }
}

function toRefusal(outcome: Exclude<LedgerOutcome, { ok: true }>): Refusal {
  const { limit, used, requested } = outcome;
  switch (outcome.code) {
    case 'quota_exceeded':
      return { code: 'quota_exceeded', resource: outcome.resource, limit, used, requested };
    case 'guaranteed':
      return { code: 'capacity_exhausted', resource: 'pool.guaranteed', heldResource: outcome.heldResource, limit, used, requested };
    case 'capacity_exhausted':
      return {
        code: 'capacity_exhausted',
        resource: outcome.resource as Extract<Refusal, { nodeId?: string }>['resource'],
        limit,
        used,
        requested,
        nodeId: outcome.nodeId,
      };
  }
}
