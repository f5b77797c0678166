/** Svix's schedule: after an immediate first attempt, retries 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** Each wait is spread ±20 %, so deliveries that failed together (an app's outage) do not all retry in one burst. */
export const JITTER = 0.2;

/**
 * The wait after failed attempt `attempt` (1-based), jittered; null when that was the last attempt
 * (`schedule.length + 1` attempts in all) and the delivery is dead.
 */
export function retryDelayMs(attempt: number, schedule: readonly number[], random: () => number = Math.random): number | null {
  const base = schedule[Math.floor(attempt) - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/** How long after its first attempt a delivery is declared dead, without jitter, if every attempt fails at once. */
export function retrySpanMs(schedule: readonly number[]): number {
  return schedule.reduce((sum, ms) => sum + ms, 0);
}
