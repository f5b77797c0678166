import { type DynamicModule, RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { z } from 'zod';
import type { Access } from '../routes/access.js';
import { ZodPipe } from '../common/zod.pipe.js';
import type { ApiRouteSpec } from '../routes/api-route.js';
import { routeDeclaration } from '../routes/route-metadata.js';

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete' | 'put';

/** One route as Nest registers it, with what its decorators and pipes say about it. */
export type NestRoute = Readonly<{
  /** `Controller.method`, for messages. */
  handler: string;
  method: HttpMethod;
  /** OpenAPI form: `/v1/apps/{appId}`. */
  path: string;
  access: Access;
  params: z.ZodObject | undefined;
  query: z.ZodObject | undefined;
  body: z.ZodType | undefined;
  spec: ApiRouteSpec | undefined;
  /** A creating POST that honours an Idempotency-Key header (`@Idempotent()`). */
  idempotent: boolean;
}>;

type ModuleEntry = Type | DynamicModule;
type RouteArg = Readonly<{ index: number; pipes?: unknown[] }>;

/** Every controller reachable from `root` through module imports, as Nest's scanner finds them. */
export function controllersOf(root: ModuleEntry): Type[] {
  const controllers = new Set<Type>();
  const seen = new Set<unknown>();
  const visit = (entry: ModuleEntry): void => {
    if (seen.has(entry)) return;
    seen.add(entry);
    const module = 'module' in entry ? entry.module : entry;
    const own = <T>(key: string) => (Reflect.getMetadata(key, module) as T[] | undefined) ?? [];
    for (const c of [...own<Type>(MODULE_METADATA.CONTROLLERS), ...('module' in entry ? (entry.controllers ?? []) : [])])
      controllers.add(c);
    for (const i of [...own<ModuleEntry>(MODULE_METADATA.IMPORTS), ...('module' in entry ? ((entry.imports ?? []) as ModuleEntry[]) : [])])
      visit(i);
  };
  visit(root);
  return [...controllers];
}

/** The routes of `controllers` read from Nest's own metadata (what its router explorer registers). */
export function routesOf(controllers: readonly Type[]): NestRoute[] {
  const routes: NestRoute[] = [];
  for (const controller of controllers) {
    const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const { access, spec, idempotent } = routeDeclaration(controller, handler);
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) as Record<string, RouteArg> | undefined) ?? {};
      for (const prefix of prefixes)
        for (const path of [Reflect.getMetadata(PATH_METADATA, handler) as string | string[]].flat()) {
          routes.push({
            handler: `${controller.name}.${name}`,
            method: RequestMethod[method].toLowerCase() as HttpMethod,
            path: openApiPath(prefix, path),
            access,
            params: schemaOf(args, RouteParamtypes.PARAM) as z.ZodObject | undefined,
            query: schemaOf(args, RouteParamtypes.QUERY) as z.ZodObject | undefined,
            body: schemaOf(args, RouteParamtypes.BODY),
            spec,
            idempotent,
          });
        }
    }
  }
  return routes;
}

function openApiPath(prefix: string, path: string): string {
  const joined = `/${[prefix, path].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/').replace(/:(\w+)/g, '{$1}');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}

/** The zod schema a `ZodPipe` validates this kind of argument with (keys are `paramtype:index`). */
function schemaOf(args: Record<string, RouteArg>, type: RouteParamtypes): z.ZodType | undefined {
  for (const [key, arg] of Object.entries(args)) {
    if (Number(key.split(':')[0]) !== Number(type)) continue;
    const pipe = arg.pipes?.find((p): p is ZodPipe<z.ZodType> => p instanceof ZodPipe);
    if (pipe) return pipe.schema;
  }
  return undefined;
}
