import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod, type DynamicModule, type Type } from '@nestjs/common';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Config } from '@tally/config';
import { describe, expect, it } from 'vitest';
import { ApiModule } from '../app.module.js';
import { buildOpenApiDocument } from './openapi.document.js';

type Document = Readonly<{ paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } }>;

/** Served, but not part of the API contract: the dashboard's static files and this document itself. */
const UNDOCUMENTED = [/^GET \/dashboard(\/\*)?$/, /^GET \/openapi\.json$/];

/** Every route Nest registers for the API's modules, as `METHOD /path/{param}` (what Nest's router explorer reads). */
function nestRoutes(): string[] {
  const routes = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (entry: Type | DynamicModule): void => {
    if (seen.has(entry)) return;
    seen.add(entry);
    const module = 'module' in entry ? entry.module : entry;
    const imports: (Type | DynamicModule)[] = [
      ...((Reflect.getMetadata(MODULE_METADATA.IMPORTS, module) as (Type | DynamicModule)[] | undefined) ?? []),
      ...('module' in entry ? ((entry.imports ?? []) as (Type | DynamicModule)[]) : []),
    ];
    const controllers: Type[] = [
      ...((Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, module) as Type[] | undefined) ?? []),
      ...('module' in entry ? (entry.controllers ?? []) : []),
    ];
    for (const controller of controllers) {
      const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function' || name === 'constructor') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        for (const prefix of prefixes)
          for (const path of [Reflect.getMetadata(PATH_METADATA, handler) as string | string[]].flat()) {
            const joined = `/${[prefix, path].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/').replace(/:(\w+)/g, '{$1}');
            routes.add(`${RequestMethod[method]} ${joined === '/' ? '/' : joined.replace(/\/$/, '')}`);
          }
      }
    }
    for (const child of imports) visit(child);
  };
  visit(ApiModule.forRoot({} as Config));
  return [...routes].filter((r) => !UNDOCUMENTED.some((pattern) => pattern.test(r))).sort();
}

describe(buildOpenApiDocument.name, () => {
  const sut = buildOpenApiDocument('test') as unknown as Document;

  it('documents exactly the routes Nest serves', () => {
    const documented = Object.entries(sut.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();

    const served = nestRoutes();

    expect(served.length).toBeGreaterThan(40);
    expect(documented).toEqual(served);
  });

  it('is a valid OpenAPI 3.1 document whose every reference resolves', async () => {
    const result = await new Validator().validate(structuredClone(sut));
    const refs = new Set<string>();
    JSON.stringify(sut, (key, value: unknown) => (key === '$ref' && typeof value === 'string' ? (refs.add(value), value) : value));
    const unresolved = [...refs].filter((ref) => !(ref.replace('#/components/schemas/', '') in sut.components.schemas));

    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(unresolved).toEqual([]);
    expect(JSON.stringify(sut)).not.toMatch(/"\$id"|\$defs/);
  });
});
