import { SetMetadata } from '@nestjs/common';

export const DIRECT = 'tally:direct-route';

/**
 * Marks a controller route that Fastify serves without Nest's router: the route is still declared,
 * documented (OpenAPI) and validated by its decorators, and its controller method still answers, but
 * the guard, the `ZodPipe`s and the error filter are called straight from the Fastify handler. Nest's
 * per-request pipeline (execution context, guard and pipe consumers, the adapter's handler) costs a
 * hot route several µs of CPU per request (docs/capacity.md). Only for routes whose arguments are
 * `@Param` / `@Body` / `@Query` objects validated by a `ZodPipe`, with no interceptor but
 * `@Idempotent()`: a request carrying an Idempotency-Key goes through Nest's handler, interceptor
 * included; one without it (where the interceptor does nothing) is served directly
 * (pipeline/direct-routes.ts).
 */
export const DirectRoute = () => SetMetadata(DIRECT, true);
