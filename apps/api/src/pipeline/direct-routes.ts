import { HttpStatus, RequestMethod, type Type } from '@nestjs/common';
import {
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { DiscoveryService } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Access } from '../routes/access.js';
import type { AuthGuard } from './auth.guard.js';
import { IDEMPOTENCY_HEADER } from '../idempotency/idempotency.interceptor.js';
import { routeDeclaration } from '../routes/route-metadata.js';
import { endOfTurn } from '../common/end-of-turn.js';
import { sendError } from '../common/http-error.filter.js';
import { ZodPipe } from '../common/zod.pipe.js';

type Arg = Readonly<{ from: 'params' | 'body' | 'query'; pipe: ZodPipe<z.ZodType> }>;
type Direct = Readonly<{
  controller: Type;
  instance: object;
  method: string;
  access: Access;
  args: readonly Arg[];
  status: number;
  idempotent: boolean;
}>;

const SOURCES: Partial<Record<RouteParamtypes, Arg['from']>> = {
  [RouteParamtypes.PARAM]: 'params',
  [RouteParamtypes.BODY]: 'body',
  [RouteParamtypes.QUERY]: 'query',
};

/** What serving a route directly needs of the API's guard (AuthGuard). */
export type DirectGuard = Pick<AuthGuard, 'authorize'>;

/**
 * Replaces the handler Nest registers for each `@DirectRoute()` of every controller Nest's discovery
 * finds (an onRoute hook: call after the application is created and before Nest registers its
 * routes, in `app.init()`). `guard` is the API's global guard.
 */
export function registerDirectRoutes(fastify: FastifyInstance, discovery: DiscoveryService, guard: DirectGuard): void {
  const byRoute = new Map<string, Direct>();
  for (const wrapper of discovery.getControllers()) {
    const controller = wrapper.metatype as Type | null;
    const instance = wrapper.instance as object | undefined;
    if (!controller || !instance) continue;
    const prototype = controller.prototype as Record<string, unknown>;
    for (const method of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[method];
      if (typeof handler !== 'function') continue;
      const { direct, idempotent, access } = routeDeclaration(controller, handler);
      if (!direct) continue;
      const interceptors = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? []) as unknown[];
      if (interceptors.length > (idempotent ? 1 : 0))
        throw new Error(`${controller.name}.${method}: a direct route has no interceptor but @Idempotent()'s`);
      const verb = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      const path = joinPath(
        Reflect.getMetadata(PATH_METADATA, controller) as string,
        Reflect.getMetadata(PATH_METADATA, handler) as string,
      );
      const status =
        (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (verb === 'POST' ? HttpStatus.CREATED : HttpStatus.OK);
      byRoute.set(`${verb} ${path}`, {
        controller,
        instance,
        method,
        access,
        args: argsOf(controller, method),
        status,
        idempotent,
      });
    }
  }
  fastify.addHook('onRoute', (route) => {
    const direct = [route.method].flat().length === 1 ? byRoute.get(`${String(route.method)} ${route.url}`) : undefined;
    if (!direct) return;
    const instance = direct.instance as Record<string, (...args: unknown[]) => unknown>;
    const access = direct.access;
    const viaNest = route.handler;
    route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      if (direct.idempotent && request.headers[IDEMPOTENCY_HEADER] !== undefined) return viaNest.call(this, request, reply);
      try {
        const authorizing = guard.authorize(request, access);
        if (authorizing) await authorizing;
        const args = direct.args.map((arg) => arg.pipe.transform(request[arg.from]));
        const result = await instance[direct.method]!.apply(instance, args);
        // The responses of one loop turn leave together (common/end-of-turn.ts).
        await endOfTurn();
        return await reply.code(direct.status).send(result);
      } catch (error) {
        sendError(request, reply, error);
        return reply;
      }
    };
  });
}

function argsOf(controller: Type, method: string): Arg[] {
  const declared = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
    string,
    { index: number; data?: unknown; pipes?: unknown[] }
  >;
  const args: Arg[] = [];
  for (const [key, arg] of Object.entries(declared)) {
    const from = SOURCES[Number(key.split(':')[0]) as RouteParamtypes];
    const pipe: unknown = arg.pipes?.length === 1 ? arg.pipes[0] : undefined;
    if (from === undefined || arg.data !== undefined || !(pipe instanceof ZodPipe))
      throw new Error(`${controller.name}.${method}: a direct route takes whole @Param/@Body/@Query objects, each with one ZodPipe`);
    args[arg.index] = { from, pipe: pipe as ZodPipe<z.ZodType> };
  }
  return args;
}

/** Nest's route path as Fastify receives it: `/v1/apps/:appId/streams/:streamId/tokens`. */
function joinPath(prefix: string, path: string): string {
  return `/${[prefix, path].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/');
}
