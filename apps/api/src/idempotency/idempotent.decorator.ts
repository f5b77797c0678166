import { SetMetadata } from '@nestjs/common';

export const IDEMPOTENT = 'tally:idempotent';

/** A creating POST: it honours an Idempotency-Key header (IdempotencyInterceptor). */
export const Idempotent = () => SetMetadata(IDEMPOTENT, true);
