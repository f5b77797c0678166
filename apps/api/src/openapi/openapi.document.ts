import { z } from 'zod';
import { ErrorBody, RateLimitRefusal } from '@tally/contracts';
import type { Access } from '../routes/access.js';
import type { ApiRouteSpec } from '../routes/api-route.js';
import type { NestRoute } from './nest-routes.js';

type DocumentedRoute = NestRoute & Readonly<{ spec: NonNullable<NestRoute['spec']> }>;

type JsonSchema = Record<string, unknown>;

/**
 * OpenAPI 3.1 from the controllers' own routes: Nest's method and path, the `ZodPipe` schemas of
 * their params, query and body, their access decorator, and `@ApiRoute`'s summary and responses.
 * Schemas with an id become shared components. Routes without `@ApiRoute` are left out (a test
 * fails on any that should not be).
 */
export function buildOpenApiDocument(version: string, routes: readonly NestRoute[]): JsonSchema {
  const documented = routes.filter((r): r is DocumentedRoute => r.spec !== undefined);
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of documented) {
    (paths[route.path] ??= {})[route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Tally', version, description: 'Self-hosted streaming platform with capacity-aware quotas.' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The admin key or an app key' } },
      headers: RATE_LIMIT_HEADERS,
      responses: { RateLimited: rateLimited(undefined) },
      schemas: Object.fromEntries(Object.entries(components(documented)).map(([id, schema]) => [id, relink(schema, 'output')])),
    },
    paths,
  };
}

function operation(route: DocumentedRoute): JsonSchema {
  const parameters = [...fields(route.params, 'path'), ...fields(route.query, 'query'), ...(route.idempotent ? [IDEMPOTENCY_KEY] : [])];
  const responses: Record<string, JsonSchema> = {};
  const auth = route.spec.auth ?? route.access;
  const declared = { ...defaultErrors(route, auth), ...route.spec.responses, ...(route.idempotent ? { 409: ErrorBody } : {}) };
  for (const [status, schema] of Object.entries(declared).sort(([a], [b]) => Number(a) - Number(b))) {
    responses[status] = schema
      ? { description: describeStatus(Number(status)), content: { 'application/json': { schema: ref(schema) } } }
      : { description: describeStatus(Number(status)) };
  }
  if (auth === 'admin' || auth === 'app' || auth === 'viewer') {
    const own = route.spec.responses[429];
    responses['429'] = own ? rateLimited(own) : { $ref: '#/components/responses/RateLimited' };
  }
  return {
    summary: route.spec.summary,
    'x-tally-auth': auth,
    ...(auth === 'admin' || auth === 'app' || auth === 'node' ? { security: [{ bearer: [] }] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(route.body, 'input') } } } } : {}),
    responses,
  };
}

/**
 * The errors a route answers by what it is, so no route has to list them: 400 naming the field when
 * it reads params, a query or a body; 401 when it checks a credential (a key, a node's credential,
 * a viewer token, LiveKit's signature); 403 when only the admin key may call it; 404 for an unknown id, or another app's, when a keyed route
 * has ids in its path. A route adds what else it answers in its own `responses`.
 */
function defaultErrors(route: DocumentedRoute, auth: NonNullable<ApiRouteSpec['auth']> | Access): Record<number, z.ZodType> {
  const errors: Record<number, z.ZodType> = {};
  if (route.params || route.query || route.body) errors[400] = ErrorBody;
  if (auth !== 'public') errors[401] = ErrorBody;
  if (auth === 'admin') errors[403] = ErrorBody;
  if ((auth === 'app' || auth === 'admin' || auth === 'viewer') && route.params) errors[404] = ErrorBody;
  return errors;
}

const RATE_LIMIT_HEADERS: Record<string, JsonSchema> = {
  'Retry-After': { description: 'Seconds until the window ends', schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window ends', schema: { type: 'integer' } },
};

/**
 * Every keyed route may answer 429 `rate_limited` (docs/rate-limits.md): the key's rate, or a bad key
 * from a client over its failed authentications; beside the route's own 429 (quota or capacity)
 * where it has one. Retry-After says when the window ends.
 */
function rateLimited(own: z.ZodType | null | undefined): JsonSchema {
  const schema = own ? { oneOf: [ref(own), ref(RateLimitRefusal)] } : ref(RateLimitRefusal);
  return {
    description: own ? `${describeStatus(429)}; or rate_limited` : 'rate_limited: too many requests in the window',
    headers: Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }])),
    content: { 'application/json': { schema } },
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
    schema: inline(schema as z.ZodType, 'input'),
  }));
}

/**
 * A response points at its shared component; a request body at the component's input form (which
 * differs where defaults make a field optional to send). Schemas without an id are inlined.
 */
function ref(schema: z.ZodType, io: 'input' | 'output' = 'output'): JsonSchema {
  const id = z.globalRegistry.get(schema)?.id;
  if (id) return { $ref: `#/components/schemas/${io === 'input' ? inputName(id) : id}` };
  return inline(schema, io);
}

/** zod puts id'd sub-schemas of an inline schema in its own `$defs`; they are components here. */
function inline(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $defs: _defs, ...rest } = strip(z.toJSONSchema(schema, { io, unrepresentable: 'any' }));
  return relink(rest, io) as JsonSchema;
}

let registry: Readonly<{ output: Record<string, JsonSchema>; input: Record<string, JsonSchema> }> | undefined;

/** Every registered schema in both forms, linked to each other by component refs. */
function registered(): NonNullable<typeof registry> {
  if (registry) return registry;
  const convert = (io: 'input' | 'output') => {
    const all = z.toJSONSchema(z.globalRegistry, { io, uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any' });
    return Object.fromEntries(Object.entries(all.schemas).map(([id, schema]) => [id, strip(schema as JsonSchema)]));
  };
  registry = { output: convert('output'), input: convert('input') };
  return registry;
}

/** The component a request body of schema `id` uses: its own input form only where that differs. */
function inputName(id: string): string {
  const { input, output } = registered();
  return JSON.stringify(input[id]) === JSON.stringify(output[id]) ? id : `${id}Input`;
}

/** Output forms of every registered schema, plus the input forms request bodies reach. */
function components(routes: readonly DocumentedRoute[]): Record<string, JsonSchema> {
  const { input, output } = registered();
  const schemas: Record<string, JsonSchema> = { ...output };
  const pending = routes.flatMap((route) => {
    const id = route.body ? z.globalRegistry.get(route.body)?.id : undefined;
    return id ? [id] : [];
  });
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    const name = inputName(id);
    if (name === id || schemas[name] || !input[id]) continue;
    schemas[name] = relink(input[id], 'input') as JsonSchema;
    for (const match of JSON.stringify(input[id]).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) if (match[1]) pending.push(match[1]);
  }
  return schemas;
}

/** Points `$ref`s at components (input forms for request bodies) and drops zod's `$id`s, which OpenAPI does not resolve. */
function relink(value: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(value)) return value.map((v) => relink(v, io));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof child === 'string') {
      const id = /^#\/(?:\$defs|components\/schemas)\/(.+)$/.exec(child)?.[1];
      out[key] = id === undefined ? child : `#/components/schemas/${io === 'input' ? inputName(id) : id}`;
      continue;
    }
    out[key] = relink(child, io);
  }
  return out;
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
