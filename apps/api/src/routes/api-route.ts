import { applyDecorators, SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { z } from 'zod';
import { RATE_LIMIT_CONFIG_KEY, type RateLimitClass } from './rate-limit-class.js';

export const API_ROUTE = 'tally:openapi';

/** What the OpenAPI document says about a route beyond what Nest and its zod pipes already know. */
export type ApiRouteSpec = Readonly<{
  summary: string;
  /**
   * The statuses the route answers, with their bodies' schemas (null: no body), beyond the errors
   * every route of its kind answers (400, 401, 403, 404 by its input and access: the document adds those).
   */
  responses: Readonly<Record<number, z.ZodType | null>>;
  /**
   * Public routes that check something other than a key: LiveKit's signature (`livekit`), a camera
   * viewer token or key, counted as failed authentications (`viewer`, 429 rate_limited), or a joined
   * node's own credential (`node`).
   */
  auth?: 'livekit' | 'viewer' | 'node';
  /** `start`: the route starts something that costs media resources and counts against the app's stricter start rate. */
  rateLimit?: RateLimitClass;
}>;

/**
 * Documents a controller method. Method, path, parameters, query and body come from the route's own
 * Nest decorators and `ZodPipe` schemas, and access from `@Public()` / `@AdminOnly()`. A route's rate
 * limit class is declared here too, so the document and the limiter read the same declaration.
 */
export const ApiRoute = (spec: ApiRouteSpec) =>
  applyDecorators(SetMetadata(API_ROUTE, spec), ...(spec.rateLimit ? [RouteConfig({ [RATE_LIMIT_CONFIG_KEY]: spec.rateLimit })] : []));
