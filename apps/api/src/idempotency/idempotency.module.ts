import { Global, Module } from '@nestjs/common';
import { IdempotencyStore } from './idempotency.store.js';

/**
 * The store behind `@Idempotent()`: global, because the decorator's interceptor is created in the
 * module of each controller that uses it.
 */
@Global()
@Module({ providers: [IdempotencyStore], exports: [IdempotencyStore] })
export class IdempotencyModule {}
