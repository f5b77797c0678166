import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';

export const IDEMPOTENT = 'tally:idempotent';

/** A creating POST: it honours an Idempotency-Key header (IdempotencyInterceptor, on this route only). */
export const Idempotent = () => applyDecorators(SetMetadata(IDEMPOTENT, true), UseInterceptors(IdempotencyInterceptor));
