import { z } from 'zod';

export const ErrorCode = z.enum([
  'validation_failed',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'quota_exceeded',
  'capacity_exhausted',
  'rate_limited',
  'upstream_unavailable',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorBody = z
  .object({
    error: z.object({
      code: ErrorCode,
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
    requestId: z.string(),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** What a 429 says: which limit was hit and by how much. */
export const LimitRefusal = z
  .object({
    error: z.object({
      code: z.enum(['quota_exceeded', 'capacity_exhausted']),
      message: z.string(),
      resource: z.string(),
      limit: z.number(),
      used: z.number(),
      requested: z.number(),
      retryAfterS: z.number().optional(),
      /** The node that came closest to fitting, for capacity refusals; shown to the admin key only. */
      nodeId: z.string().optional(),
      /**
       * With resource `pool.guaranteed`: the node resource that other apps' unused guarantees keep
       * free (`node.ram`, `node.cpu`, `node.nic`); limit / used / requested are in its unit.
       */
      heldResource: z.string().optional(),
    }),
    requestId: z.string(),
  })
  .meta({ id: 'LimitRefusal' });
export type LimitRefusal = z.infer<typeof LimitRefusal>;

/**
 * A 429 for too many requests: the app's (or the admin key's) rate over the window, or too many failed
 * authentications from the client's address; retry after `retryAfterS`.
 */
export const RateLimitRefusal = z
  .object({
    error: z.object({
      code: z.literal('rate_limited'),
      message: z.string(),
      /** `app.requests`, `app.starts`, `admin.requests` or `client.auth_failures`. */
      resource: z.string(),
      /** Requests allowed per window. */
      limit: z.number().int(),
      windowS: z.number().int(),
      retryAfterS: z.number().int(),
    }),
    requestId: z.string(),
  })
  .meta({ id: 'RateLimitRefusal' });
export type RateLimitRefusal = z.infer<typeof RateLimitRefusal>;
