import { z } from 'zod';
import { ErrorBody } from '@tally/contracts';
import type { RouteSpec } from './route-spec.js';
import { ROUTES } from './routes.js';

type JsonSchema = Record<string, unknown>;

/** OpenAPI 3.1 built from the route table; schemas with an id become shared components. */
export function buildOpenApiDocument(version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of ROUTES) {
    (paths[route.path] ??= {})[route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Tally', version, description: 'Self-hosted streaming platform with capacity-aware quotas.' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The admin key or an app key' } },
      schemas: components(),
    },
    paths,
  };
}

function operation(route: RouteSpec): JsonSchema {
  const parameters = [...fields(route.params, 'path'), ...fields(route.query, 'query'), ...(route.idempotent ? [IDEMPOTENCY_KEY] : [])];
  const responses: Record<string, JsonSchema> = {};
  for (const [status, schema] of Object.entries({ ...route.responses, ...(route.idempotent ? { 409: ErrorBody } : {}) })) {
    responses[status] = schema
      ? { description: describeStatus(Number(status)), content: { 'application/json': { schema: ref(schema) } } }
      : { description: describeStatus(Number(status)) };
  }
  return {
    summary: route.summary,
    'x-tally-auth': route.auth,
    ...(route.auth === 'admin' || route.auth === 'app' ? { security: [{ bearer: [] }] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(route.body, 'input') } } } } : {}),
    responses,
  };
}

const IDEMPOTENCY_KEY: JsonSchema = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe (Stripe’s convention): the same key with the same body within 24 h returns the first response ' +
    '(header `idempotent-replayed: true`) and creates nothing; the same key with a different body, or while the first ' +
    'request still runs, is a 409. A failed request keeps nothing. Keys are per caller (the admin key, or one app).',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

function fields(shape: z.ZodObject | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!shape) return [];
  return Object.entries(shape.shape).map(([name, schema]) => ({
    name,
    in: where,
    required: where === 'path' || !(schema as z.ZodType).safeParse(undefined).success,
    schema: strip(z.toJSONSchema(schema as z.ZodType, { io: 'input' })),
  }));
}

function ref(schema: z.ZodType, io: 'input' | 'output' = 'output'): JsonSchema {
  const id = z.globalRegistry.get(schema)?.id;
  if (id && io === 'output') return { $ref: `#/components/schemas/${id}` };
  return strip(z.toJSONSchema(schema, { io, unrepresentable: 'any' }));
}

function components(): Record<string, JsonSchema> {
  const all = z.toJSONSchema(z.globalRegistry, { uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any' });
  return Object.fromEntries(Object.entries(all.schemas).map(([id, schema]) => [id, strip(schema as JsonSchema)]));
}

function strip(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

function describeStatus(status: number): string {
  const text: Record<number, string> = {
    200: 'OK',
    201: 'Created',
    204: 'No content',
    400: 'Invalid request (names the field)',
    401: 'Missing, unknown or revoked key',
    404: "Unknown id, or another app's",
    409: 'Conflict',
    429: 'Quota or capacity refusal naming the resource',
    503: 'A dependency is unavailable',
  };
  return text[status] ?? String(status);
}
