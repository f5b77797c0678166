import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { AppId } from '@tally/contracts';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { LiveApps } from '../tenancy/live-apps.js';
import { AuthFailureLimiter } from '../rate-limit/auth-failures.js';
import { KeyUsageRecorder } from '../tenancy/key-usage.js';
import { PrincipalResolver } from '../tenancy/principal-resolver.js';
import { type AuthenticatedRequest, type Principal } from '../tenancy/principal.js';
import type { Access } from '../routes/access.js';
import { routeDeclaration } from '../routes/route-metadata.js';

/**
 * Bearer auth for every route. An app key only opens routes of its own app;
 * another app's id answers 404 so ids of other tenants cannot be probed.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly principals: PrincipalResolver,
    private readonly usage: KeyUsageRecorder,
    private readonly apps: LiveApps,
    private readonly authFailures: AuthFailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    await this.authorize(
      context.switchToHttp().getRequest<AuthenticatedRequest>(),
      routeDeclaration(context.getClass(), context.getHandler()).access,
    );
    return true;
  }

  /** Lets the request through a route of this `access` or throws the refusal (routes served without Nest call it directly). */
  async authorize(request: AuthenticatedRequest, access: Access): Promise<void> {
    if (access === 'public') return;
    const principal = await this.authenticate(request);
    request.principal = principal;

    const params = request.params as Record<string, string | undefined>;
    if (principal.kind === 'admin') {
      // A deleted app's rows stay until the worker has torn it down; none of its routes answer meanwhile.
      // A malformed id is left to the route's validation (400 naming the field).
      if (params.appId !== undefined && AppId.safeParse(params.appId).success && !(await this.apps.exists(params.appId))) {
        throw new NotFoundError('app');
      }
      return;
    }
    if (params.appId !== undefined && params.appId !== principal.appId) throw new NotFoundError('app');
    if (access === 'admin') throw new DomainError('forbidden', 'this route needs the admin key');
  }

  private async authenticate(request: AuthenticatedRequest): Promise<Principal> {
    const principal = await this.principals.ofRequest(request);
    // request.ip: the client's address, or the one a proxy on this host (Caddy) forwarded (trustProxy).
    if (principal === 'throttled') {
      throw this.authFailures.refusedBeforeLookup(request.ip) ?? new DomainError('unauthorized', 'unknown or revoked key');
    }
    if (principal === 'missing' || principal === 'unknown') {
      const refusal = await this.authFailures.refusal(request.ip);
      if (refusal) throw refusal;
    }
    if (principal === 'missing') throw new DomainError('unauthorized', 'missing bearer token');
    if (principal === 'unknown') throw new DomainError('unauthorized', 'unknown or revoked key');
    if (principal.kind === 'app') this.usage.record(principal.keyId);
    return principal;
  }
}
