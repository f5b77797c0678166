import { z } from 'zod';
import { BASE_LOAD_COMPONENTS } from './budget.js';
import { RUNTIMES, WORKLOAD_KINDS } from './costs.js';

const amount = z.number().finite().nonnegative();

const loadOverrideSchema = z.strictObject({
  ramMb: amount.optional(),
  cpuMillicores: amount.optional(),
  nicKbps: amount.optional(),
});

const costOverrideSchema = loadOverrideSchema.extend({ nvencSessions: z.number().int().nonnegative().optional() });

/**
 * A capacity profile, as `bench/capacity` writes it after measuring the operator's own hardware.
 * Every part is optional: whatever it names replaces the default, field by field.
 */
export const capacityProfileSchema = z.strictObject({
  version: z.literal(1),
  /** Where and when it was measured, for the dashboard; not used by the math. */
  host: z.string().max(200).optional(),
  measuredAt: z.iso.datetime().optional(),
  costs: z.partialRecord(z.enum(WORKLOAD_KINDS), costOverrideSchema).optional(),
  runtimes: z.partialRecord(z.enum(RUNTIMES), loadOverrideSchema).optional(),
  baseLoad: z.partialRecord(z.enum(BASE_LOAD_COMPONENTS), loadOverrideSchema).optional(),
  /** Bytes per second one running unit of a kind writes to its filesystem, as measured. */
  diskWriteBytesPerS: z.partialRecord(z.enum(WORKLOAD_KINDS), amount).optional(),
});

export type CapacityProfile = z.infer<typeof capacityProfileSchema>;
