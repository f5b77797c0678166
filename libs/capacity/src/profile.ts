import { BASE_LOAD_COMPONENTS, type BaseLoad } from './budget.js';
import { RUNTIMES, WORKLOAD_KINDS, type CostTable, type RuntimeTable, type WorkloadCost } from './costs.js';
import { DEFAULT_MODEL, type CapacityModel } from './model.js';
import { capacityProfileSchema, type CapacityProfile } from './profile.schema.js';
import type { Load } from './resources.js';

/** Lays a profile over a model (the defaults unless given), field by field. */
export function modelFromProfile(profile: CapacityProfile, base: CapacityModel = DEFAULT_MODEL): CapacityModel {
  const costs = Object.fromEntries(
    WORKLOAD_KINDS.map((kind) => [kind, { ...base.costs[kind], ...defined(profile.costs?.[kind]) }]),
  ) as Record<(typeof WORKLOAD_KINDS)[number], WorkloadCost>;
  const runtimes = Object.fromEntries(RUNTIMES.map((rt) => [rt, { ...base.runtimes[rt], ...defined(profile.runtimes?.[rt]) }])) as Record<
    (typeof RUNTIMES)[number],
    Load
  >;
  const baseLoad = Object.fromEntries(
    BASE_LOAD_COMPONENTS.map((c) => [c, { ...base.baseLoad[c], ...defined(profile.baseLoad?.[c]) }]),
  ) as Record<(typeof BASE_LOAD_COMPONENTS)[number], Load>;
  const disk = { ...base.disk, writeBytesPerS: { ...base.disk.writeBytesPerS, ...defined(profile.diskWriteBytesPerS) } };
  return { costs: costs satisfies CostTable, runtimes: runtimes satisfies RuntimeTable, baseLoad: baseLoad satisfies BaseLoad, disk };
}

export type ProfileResult =
  Readonly<{ ok: true; profile: CapacityProfile; model: CapacityModel }> | Readonly<{ ok: false; issues: readonly string[] }>;

/** Validates a profile file's parsed JSON and resolves it against the defaults. */
export function parseCapacityProfile(input: unknown, base: CapacityModel = DEFAULT_MODEL): ProfileResult {
  const parsed = capacityProfileSchema.safeParse(input);
  if (!parsed.success) {
    return { ok: false, issues: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
  }
  const model = modelFromProfile(parsed.data, base);
  // A free workload would make every derived quota infinite.
  const free = WORKLOAD_KINDS.filter((kind) => {
    const c = model.costs[kind];
    return c.ramMb === 0 && c.cpuMillicores === 0 && c.nicKbps === 0 && c.nvencSessions === 0;
  });
  if (free.length > 0) return { ok: false, issues: free.map((kind) => `costs.${kind}: every resource is 0`) };
  return { ok: true, profile: parsed.data, model };
}

/** Drops keys whose value is undefined so that they do not erase a default when spread. */
function defined<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
