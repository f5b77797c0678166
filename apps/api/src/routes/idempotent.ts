/** Metadata key of a creating POST that honours an Idempotency-Key header (`@Idempotent()`, idempotency/). */
export const IDEMPOTENT = 'tally:idempotent';
