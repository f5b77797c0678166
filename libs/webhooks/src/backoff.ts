export type RetryPolicy = Readonly<{ maxAttempts: number; backoffMs: number; maxBackoffMs: number }>;

/** The wait after failed attempt `attempt` (1-based): `min(backoffMs · 2^(attempt-1), maxBackoffMs)`. */
export function backoffDelayMs(attempt: number, policy: Pick<RetryPolicy, 'backoffMs' | 'maxBackoffMs'>): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2^exponent overflows to Infinity long after it passes any sane cap; min() handles both.
  return Math.min(policy.backoffMs * 2 ** exponent, policy.maxBackoffMs);
}

/** The waits between all attempts of a delivery (maxAttempts - 1 of them). */
export function retrySchedule(policy: RetryPolicy): number[] {
  return Array.from({ length: Math.max(0, policy.maxAttempts - 1) }, (_, i) => backoffDelayMs(i + 1, policy));
}

/** How long after its first attempt a delivery is declared dead, if every attempt fails at once. */
export function retrySpanMs(policy: RetryPolicy): number {
  return retrySchedule(policy).reduce((sum, ms) => sum + ms, 0);
}
