import { type AppQuotaPolicy, QUOTA_CLASSES } from '@tally/capacity';
import { z } from 'zod';

/** An app's explicit limits by quota class, as stored in `App.limits`. */
export const StoredLimits = z.partialRecord(z.enum(QUOTA_CLASSES), z.number().int().min(0));
export type StoredLimits = z.infer<typeof StoredLimits>;

/** A malformed column counts as no explicit limits: the app gets its derived share. */
export function parseStoredLimits(value: unknown): StoredLimits {
  const parsed = StoredLimits.safeParse(value);
  return parsed.success ? parsed.data : {};
}

export function toAppPolicy(row: Readonly<{ id: string; limits: unknown }>): AppQuotaPolicy {
  return { appId: row.id, limits: parseStoredLimits(row.limits) };
}
