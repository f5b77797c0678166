import { type AppQuotaPolicy, type CapacityModel, type EgressModeSetting, guaranteeUnitCosts, QUOTA_CLASSES } from '@tally/capacity';
import { parseStoredRateLimits } from '@tally/contracts';
import { z } from 'zod';
import type { StoredPolicy } from './capacity-ledger.types.js';

/** An app's explicit limits or guarantees by quota class, as stored in `App.limits` / `App.guarantees`. */
export const StoredLimits = z.partialRecord(z.enum(QUOTA_CLASSES), z.number().int().min(0));
export type StoredLimits = z.infer<typeof StoredLimits>;

/** A malformed column counts as none set: the app gets the derived caps and no guarantee. */
export function parseStoredLimits(value: unknown): StoredLimits {
  const parsed = StoredLimits.safeParse(value);
  return parsed.success ? parsed.data : {};
}

/** The App columns a policy is made of (a Prisma `select`). */
export const POLICY_COLUMNS = { id: true, limits: true, guarantees: true, recordingMode: true, rateLimits: true } as const;

export type AppPolicyRow = Readonly<{
  id: string;
  limits: unknown;
  guarantees: unknown;
  recordingMode: EgressModeSetting;
  rateLimits?: unknown;
}>;

export function toAppPolicy(row: AppPolicyRow): AppQuotaPolicy {
  return {
    appId: row.id,
    limits: parseStoredLimits(row.limits),
    guarantees: parseStoredLimits(row.guarantees),
    egressMode: row.recordingMode,
    rateLimits: parseStoredRateLimits(row.rateLimits),
  };
}

/** The policy as the reserve script reads it, with the load each guaranteed unit keeps free under `model`. */
export function toStoredPolicy(policy: AppQuotaPolicy, model: CapacityModel): StoredPolicy {
  const units = guaranteeUnitCosts(model);
  const guarantees = Object.fromEntries(Object.entries(policy.guarantees ?? {}).filter(([, g]) => g > 0));
  return {
    limits: { ...policy.limits },
    guarantees,
    units: Object.fromEntries(Object.keys(guarantees).map((cls) => [cls, units[cls as keyof typeof units]])),
    mode: policy.egressMode ?? 'auto',
    rates: { ...policy.rateLimits },
  };
}

export function fromStoredPolicy(appId: string, stored: StoredPolicy): AppQuotaPolicy {
  return { appId, limits: stored.limits, guarantees: stored.guarantees, egressMode: stored.mode, rateLimits: stored.rates ?? {} };
}
