import { z } from 'zod';

const perMinute = z.number().int().min(1).max(10_000_000);

/**
 * An app's request rates as the operator sets them (`PATCH /v1/apps/{appId}` with the admin key):
 * every request of its keys, and each start of something that costs media resources (recording,
 * HLS, ingress). A number replaces the default (TALLY_RATE_LIMIT_*); null goes back to it.
 */
export const RateLimitOverrides = z
  .strictObject({
    requestsPerMinute: perMinute.nullable().optional(),
    startsPerMinute: perMinute.nullable().optional(),
  })
  .meta({ id: 'RateLimitOverrides' });
export type RateLimitOverrides = z.infer<typeof RateLimitOverrides>;

/** What is stored (`App.rateLimits`) and mirrored into the app's policy in Redis: only the rates the operator set. */
export const StoredRateLimits = z.object({ requestsPerMinute: perMinute.optional(), startsPerMinute: perMinute.optional() });
export type StoredRateLimits = z.infer<typeof StoredRateLimits>;

/** An app's effective rates, with which of them the operator set. */
export const AppRateLimits = z
  .object({
    requestsPerMinute: z.number().int(),
    startsPerMinute: z.number().int(),
    explicit: StoredRateLimits,
  })
  .meta({ id: 'AppRateLimits' });
export type AppRateLimits = z.infer<typeof AppRateLimits>;

/** A malformed column counts as nothing set: the app gets the defaults. */
export function parseStoredRateLimits(value: unknown): StoredRateLimits {
  const parsed = StoredRateLimits.safeParse(value);
  return parsed.success ? parsed.data : {};
}

/** `overrides` applied onto `current`: a number sets a rate, null removes it. */
export function mergeRateLimits(current: StoredRateLimits, overrides: RateLimitOverrides): StoredRateLimits {
  const next: Record<string, number> = { ...current };
  for (const [field, value] of Object.entries(overrides)) {
    if (value === null) delete next[field];
    else if (value !== undefined) next[field] = value;
  }
  return next;
}
