import { type AppLimits, type QuotaClass } from '@tally/capacity';
import { type AppQuotas, QUOTA_FIELD_NAMES, QUOTA_FIELDS, type QuotaOverrides } from '@tally/contracts';
import type { StoredLimits } from '@tally/admission';

/** Applies a PATCH: numbers set a class, null removes it (back to the derived share). */
export function mergeOverrides(current: StoredLimits, overrides: QuotaOverrides): StoredLimits {
  const next: Partial<Record<QuotaClass, number>> = { ...current };
  for (const field of QUOTA_FIELD_NAMES) {
    const value = overrides[field];
    if (value === undefined) continue;
    if (value === null) delete next[QUOTA_FIELDS[field]];
    else next[QUOTA_FIELDS[field]] = value;
  }
  return next;
}

export function toQuotaView(limits: AppLimits): AppQuotas {
  return Object.fromEntries(QUOTA_FIELD_NAMES.map((f) => [f, finite(limits[QUOTA_FIELDS[f]])])) as AppQuotas;
}

export function toOverridesView(stored: StoredLimits): QuotaOverrides {
  return Object.fromEntries(
    QUOTA_FIELD_NAMES.flatMap((f) => (stored[QUOTA_FIELDS[f]] === undefined ? [] : [[f, stored[QUOTA_FIELDS[f]]]])),
  );
}

function finite(n: number): number {
  return Number.isFinite(n) ? n : 1_000_000;
}
