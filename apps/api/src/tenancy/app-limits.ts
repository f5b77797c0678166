import { type AppLimits, type QuotaClass } from '@tally/capacity';
import { type AppQuotas, QUOTA_FIELD_NAMES, QUOTA_FIELDS, type QuotaField, type QuotaOverrides } from '@tally/contracts';
import type { StoredLimits } from '@tally/admission';

/** Applies a PATCH: numbers set a class, null removes it (a cap back to its default, a guarantee to none). */
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

/** Every class, 0 where nothing is set (guarantees). */
export function toFullView(stored: Partial<Record<QuotaClass, number>>): AppQuotas {
  return Object.fromEntries(QUOTA_FIELD_NAMES.map((f) => [f, stored[QUOTA_FIELDS[f]] ?? 0])) as AppQuotas;
}

export function toOverridesView(stored: StoredLimits): QuotaOverrides {
  return Object.fromEntries(
    QUOTA_FIELD_NAMES.flatMap((f) => (stored[QUOTA_FIELDS[f]] === undefined ? [] : [[f, stored[QUOTA_FIELDS[f]]]])),
  );
}

export function quotaFieldOf(cls: QuotaClass): QuotaField {
  const field = QUOTA_FIELD_NAMES.find((f) => QUOTA_FIELDS[f] === cls);
  if (field === undefined) throw new Error(`no API field for quota class ${cls}`);
  return field;
}

function finite(n: number): number {
  return Number.isFinite(n) ? n : 1_000_000;
}
