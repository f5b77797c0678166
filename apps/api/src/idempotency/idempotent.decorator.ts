import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT } from '../routes/idempotent.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';

/** A creating POST: it honours an Idempotency-Key header (IdempotencyInterceptor, on this route only). */
export const Idempotent = () => applyDecorators(SetMetadata(IDEMPOTENT, true), UseInterceptors(IdempotencyInterceptor));
