import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

export type Principal = Readonly<{ kind: 'admin' }> | Readonly<{ kind: 'app'; appId: string; keyId: string }>;

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

export const ACCESS = 'tally:access';
export type Access = 'public' | 'admin' | 'app';

/** Routes without a decorator need the admin key or the key of the app in the path. */
export const Public = () => SetMetadata(ACCESS, 'public' satisfies Access);
export const AdminOnly = () => SetMetadata(ACCESS, 'admin' satisfies Access);

export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('route reached without a principal');
  return principal;
});
