import { ACCESS, type Access } from './access.js';
import { API_ROUTE, type ApiRouteSpec } from './api-route.js';
import { DIRECT } from './direct-route.js';
import { IDEMPOTENT } from './idempotent.js';

/** What a route's own decorators declare about it: read by the guards, the direct-route registration and the OpenAPI builder alike. */
export type RouteDeclaration = Readonly<{
  /** `@Public()` / `@AdminOnly()` on the method, else on the controller, else `app`. */
  access: Access;
  /** `@ApiRoute(...)`: summary, responses, rate-limit class. */
  spec: ApiRouteSpec | undefined;
  /** `@Idempotent()`. */
  idempotent: boolean;
  /** `@DirectRoute()`. */
  direct: boolean;
}>;

// A route's declaration never changes once its class is defined: read once per controller and handler, not per request.
const declarations = new WeakMap<object, WeakMap<object, RouteDeclaration>>();

export function routeDeclaration(controller: object, handler: object): RouteDeclaration {
  let byHandler = declarations.get(controller);
  if (byHandler === undefined) declarations.set(controller, (byHandler = new WeakMap()));
  let declaration = byHandler.get(handler);
  if (declaration === undefined) {
    declaration = {
      access:
        (Reflect.getMetadata(ACCESS, handler) as Access | undefined) ??
        (Reflect.getMetadata(ACCESS, controller) as Access | undefined) ??
        'app',
      spec: Reflect.getMetadata(API_ROUTE, handler) as ApiRouteSpec | undefined,
      idempotent: Reflect.getMetadata(IDEMPOTENT, handler) === true,
      direct: Reflect.getMetadata(DIRECT, handler) === true,
    };
    byHandler.set(handler, declaration);
  }
  return declaration;
}
