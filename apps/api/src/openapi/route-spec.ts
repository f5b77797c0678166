import { ErrorBody } from '@tally/contracts';
import type { z } from 'zod';

export type RouteSpec = Readonly<{
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  auth: 'admin' | 'app' | 'public' | 'livekit';
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Readonly<Record<number, z.ZodType | null>>;
  /** A creating POST that honours an Idempotency-Key header (the handler is marked @Idempotent()). */
  idempotent?: true;
}>;

export const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody } as const;
