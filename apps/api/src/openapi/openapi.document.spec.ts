import { Validator } from '@seriousme/openapi-schema-validator';
import type { Config } from '@tally/config';
import { describe, expect, it } from 'vitest';
import { ApiModule } from '../app.module.js';
import { controllersOf, routesOf } from './nest-routes.js';
import { buildOpenApiDocument } from './openapi.document.js';

type Document = Readonly<{ paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } }>;

/** Served, but not part of the API contract: the dashboard's static files and this document itself. */
const UNDOCUMENTED = [/^get \/dashboard(\/\*)?$/, /^get \/openapi\.json$/];

describe(buildOpenApiDocument.name, () => {
  const routes = routesOf(controllersOf(ApiModule.forRoot({} as Config)));
  const sut = buildOpenApiDocument('test', routes) as unknown as Document;

  it('documents exactly the routes Nest serves, each described by its controller', () => {
    const served = routes.map((r) => `${r.method} ${r.path}`).filter((r) => !UNDOCUMENTED.some((pattern) => pattern.test(r)));
    const documented = Object.entries(sut.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    const withoutApiRoute = routes.filter((r) => r.spec === undefined && !UNDOCUMENTED.some((p) => p.test(`${r.method} ${r.path}`)));

    expect(served.length).toBeGreaterThan(40);
    expect(withoutApiRoute.map((r) => r.handler)).toEqual([]);
    expect(documented.sort()).toEqual(served.sort());
  });

  it('takes parameters, query and body from the controllers’ own zod pipes and access from their decorators', () => {
    const create = sut.paths['/v1/apps/{appId}/streams']?.['post'] as Record<string, unknown>;
    const list = sut.paths['/v1/apps']?.['get'] as Record<string, unknown>;

    expect(create['parameters']).toEqual([
      expect.objectContaining({ name: 'appId', in: 'path', required: true }),
      // The handler is @Idempotent(): retries with the same key replay the first response.
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
    ]);
    expect(list['parameters']).toBeUndefined();
    expect(JSON.stringify(create['requestBody'])).toContain('"$ref":"#/components/schemas/CreateStreamBody');
    expect(create['x-tally-auth']).toBe('app');
    expect(list['x-tally-auth']).toBe('admin');
  });

  it('documents the errors each route answers by what it is: validation, credential, admin-only and unknown ids', () => {
    const statuses = (path: string, method: string) =>
      Object.keys((sut.paths[path]?.[method] as { responses: Record<string, unknown> }).responses);

    // An app route with ids in its path and a body: every error its pipeline can answer.
    expect(statuses('/v1/apps/{appId}/streams/{streamId}/recordings', 'post')).toEqual(
      expect.arrayContaining(['400', '401', '404', '429']),
    );
    // Admin-only: an app key is refused with 403; no ids in the path, so no 404.
    expect(statuses('/v1/apps', 'get')).toEqual(['200', '401', '403', '429']);
    // Public and without input: only what the route declares itself.
    expect(statuses('/healthz', 'get')).toEqual(['200', '503']);
  });

  it('is a valid OpenAPI 3.1 document whose every reference resolves', async () => {
    const result = await new Validator().validate(structuredClone(sut));
    const refs = new Set<string>();
    JSON.stringify(sut, (key, value: unknown) => (key === '$ref' && typeof value === 'string' ? (refs.add(value), value) : value));
    const components = sut.components as unknown as Record<string, Record<string, unknown>>;
    const unresolved = [...refs].filter((ref) => {
      const [, kind = '', name = ''] = /^#\/components\/([^/]+)\/(.+)$/.exec(ref) ?? [];
      return !(name in (components[kind] ?? {}));
    });

    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(unresolved).toEqual([]);
    expect(JSON.stringify(sut)).not.toMatch(/"\$id"|\$defs/);
  });

  it('documents 429 rate_limited with Retry-After on every keyed route, beside a start route’s own quota refusal', () => {
    const start = sut.paths['/v1/apps/{appId}/streams/{streamId}/recordings']?.['post'] as { responses: Record<string, unknown> };
    const read = sut.paths['/v1/apps/{appId}']?.['get'] as { responses: Record<string, unknown> };
    const health = sut.paths['/healthz']?.['get'] as { responses: Record<string, unknown> };

    expect(JSON.stringify(start.responses['429'])).toContain(
      '"oneOf":[{"$ref":"#/components/schemas/LimitRefusal"},{"$ref":"#/components/schemas/RateLimitRefusal"}]',
    );
    expect(read.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
    expect(JSON.stringify(sut)).toContain('"Retry-After":{"$ref":"#/components/headers/Retry-After"}');
    expect(health.responses['429']).toBeUndefined();
  });
});
