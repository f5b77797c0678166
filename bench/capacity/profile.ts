import { writeFileSync } from 'node:fs';
import {
  type BaseLoadComponent,
  type CapacityModel,
  type CapacityProfile,
  capacityProfileSchema,
  DEFAULT_NODE_BUDGET,
  maxConcurrent,
  type NodeBudget,
  parseCapacityProfile,
  type WorkloadKind,
} from '@tally/capacity';

/** One measured figure: memory (PSS) in MB and CPU in millicores; NIC in kbps where it was measured. */
export type Measured = Readonly<{ ramMb: number; cpuMillicores: number; nicKbps?: number }>;

/** What bench/capacity measures, already per unit (per recording, per ingress, per viewer). */
export type CapacityMeasurements = Readonly<{
  host: string;
  measuredAt: string;
  baseLoad: Partial<Record<BaseLoadComponent, Measured>>;
  egressIdle?: Measured;
  costs: Partial<Record<WorkloadKind, Measured>>;
  /** Bytes per second one running unit wrote to its filesystem. */
  diskWriteBytesPerS?: Partial<Record<WorkloadKind, number>>;
}>;

/** Rounded up: a quota derived from a cost rounded down would admit one unit too many. */
function figure(m: Measured): { ramMb: number; cpuMillicores: number; nicKbps?: number } {
  return {
    ramMb: Math.ceil(m.ramMb),
    cpuMillicores: Math.ceil(m.cpuMillicores),
    ...(m.nicKbps === undefined ? {} : { nicKbps: Math.ceil(m.nicKbps) }),
  };
}

const entries = <K extends string>(record: Partial<Record<K, Measured>>) =>
  Object.fromEntries(Object.entries<Measured | undefined>(record).flatMap(([k, v]) => (v === undefined ? [] : [[k, figure(v)]])));

/** The capacity profile libs/capacity loads through TALLY_CAPACITY_PROFILE; only measured figures replace defaults. */
export function buildProfile(m: CapacityMeasurements): CapacityProfile {
  return capacityProfileSchema.parse({
    version: 1,
    host: m.host.slice(0, 200),
    measuredAt: m.measuredAt,
    costs: entries(m.costs),
    baseLoad: entries(m.baseLoad),
    ...(m.egressIdle ? { runtimes: { egress: figure(m.egressIdle) } } : {}),
    ...(m.diskWriteBytesPerS
      ? {
          diskWriteBytesPerS: Object.fromEntries(
            Object.entries<number | undefined>(m.diskWriteBytesPerS).flatMap(([k, v]) => (v === undefined ? [] : [[k, Math.ceil(v)]])),
          ),
        }
      : {}),
  });
}

/** Writes the profile and checks that it loads exactly as the API and worker would load it. */
export function writeProfile(path: string, profile: CapacityProfile): CapacityModel {
  writeFileSync(path, `${JSON.stringify(profile, null, 2)}\n`);
  const loaded = parseCapacityProfile(profile);
  if (!loaded.ok) throw new Error(`the profile does not load: ${loaded.issues.join('; ')}`);
  return loaded.model;
}

export const RECORDING_KINDS = ['egress.room_composite', 'egress.track_composite', 'egress.track', 'egress.passthrough'] as const;

/** How many concurrent recordings of each mode fit a node, under a model. */
export function recordingsThatFit(
  model: CapacityModel,
  node: NodeBudget = DEFAULT_NODE_BUDGET,
): Record<(typeof RECORDING_KINDS)[number], number> {
  return Object.fromEntries(RECORDING_KINDS.map((kind) => [kind, maxConcurrent(kind, node, model)])) as Record<
    (typeof RECORDING_KINDS)[number],
    number
  >;
}
