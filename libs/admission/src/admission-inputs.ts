import {
  type AppLimits,
  type AppQuotaPolicy,
  type CapacityModel,
  defaultLimits,
  effectiveLimits,
  type GuaranteeUnitCosts,
  guaranteeUnitCosts,
  type Load,
  type NodeBudget,
  poolAllocatable,
} from '@tally/capacity';

/** A node list's ids, and them joined: the key of reads shared by concurrent callers. */
export type NodeIds = Readonly<{ ids: readonly string[]; key: string }>;

/**
 * What admission derives from its inputs, derived once per input: the pool source hands out the
 * same node list and the policy cache the same policy object until they change, so a check or an
 * admission on unchanged inputs computes none of these again.
 */
export class AdmissionInputs {
  /** What one unit of each quota class holds when guaranteed: fixed by the model. */
  readonly unitCosts: GuaranteeUnitCosts;
  private readonly defaultsOf = new WeakMap<readonly NodeBudget[], Map<string, AppLimits>>();
  private readonly limitsOf = new WeakMap<AppQuotaPolicy, Readonly<{ defaults: AppLimits; limits: AppLimits }>>();
  private readonly allocatableOf = new WeakMap<readonly NodeBudget[], Load>();
  private readonly idsOf = new WeakMap<readonly NodeBudget[], NodeIds>();

  constructor(private readonly model: CapacityModel) {
    this.unitCosts = guaranteeUnitCosts(model);
  }

  /** Default caps for the live node list and the app's egress mode. */
  defaults(live: readonly NodeBudget[], egressMode: AppQuotaPolicy['egressMode']): AppLimits {
    let byMode = this.defaultsOf.get(live);
    if (!byMode) {
      byMode = new Map();
      this.defaultsOf.set(live, byMode);
    }
    const mode = egressMode ?? 'auto';
    let limits = byMode.get(mode);
    if (!limits) {
      limits = defaultLimits(live, egressMode, { model: this.model });
      byMode.set(mode, limits);
    }
    return limits;
  }

  /** The app's effective limits: its policy over these defaults. */
  limits(policy: AppQuotaPolicy, defaults: AppLimits): AppLimits {
    const known = this.limitsOf.get(policy);
    if (known?.defaults === defaults) return known.limits;
    const limits = effectiveLimits(policy, defaults);
    this.limitsOf.set(policy, { defaults, limits });
    return limits;
  }

  /** The pool's allocatable load over the live nodes. */
  allocatable(live: readonly NodeBudget[]): Load {
    let allocatable = this.allocatableOf.get(live);
    if (allocatable === undefined) {
      allocatable = poolAllocatable(live, this.model);
      this.allocatableOf.set(live, allocatable);
    }
    return allocatable;
  }

  nodeIds(nodes: readonly NodeBudget[]): NodeIds {
    let known = this.idsOf.get(nodes);
    if (known === undefined) {
      const ids = nodes.map((n) => n.id);
      known = { ids, key: ids.join(',') };
      this.idsOf.set(nodes, known);
    }
    return known;
  }
}
