import { SetMetadata } from '@nestjs/common';
import type { z } from 'zod';

export const API_ROUTE = 'tally:openapi';

/** What the OpenAPI document says about a route beyond what Nest and its zod pipes already know. */
export type ApiRouteSpec = Readonly<{
  summary: string;
  /** Each status the route answers, with its body's schema (null: no body). */
  responses: Readonly<Record<number, z.ZodType | null>>;
  /** Public routes that check LiveKit's signature rather than a key. */
  auth?: 'livekit';
}>;

/**
 * Documents a controller method. Method, path, parameters, query and body come from the route's own
 * Nest decorators and `ZodPipe` schemas, and access from `@Public()` / `@AdminOnly()`.
 */
export const ApiRoute = (spec: ApiRouteSpec) => SetMetadata(API_ROUTE, spec);
