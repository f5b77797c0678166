import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { AppId } from '@tally/contracts';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { LiveApps } from '../tenancy/live-apps.js';
import { AuthFailureLimiter } from '../rate-limit/auth-failures.js';
import { KeyUsageRecorder } from '../tenancy/key-usage.js';
import { PrincipalResolver, type Unresolved } from '../tenancy/principal-resolver.js';
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

  /**
   * Lets the request through a route of this `access` or throws the refusal (routes served without
   * Nest call it directly). Synchronous for an app key resolved before (PrincipalResolver), so the
   * hot routes pay no promise for it; a promise otherwise.
   */
  authorize(request: AuthenticatedRequest, access: Access): void | Promise<void> {
    if (access === 'public') return;
    const principal = this.principals.ofRequest(request);
    if (principal instanceof Promise) return principal.then((resolved) => this.admit(request, access, resolved));
    return this.admit(request, access, principal);
  }

  private admit(request: AuthenticatedRequest, access: Access, resolved: Principal | Unresolved): void | Promise<void> {
    if (typeof resolved === 'string') return this.refuse(request, resolved);
    if (resolved.kind === 'app') this.usage.record(resolved.keyId);
    request.principal = resolved;
    const params = request.params as Record<string, string | undefined>;
    if (resolved.kind === 'admin') return this.admitAdmin(params.appId);
    if (params.appId !== undefined && params.appId !== resolved.appId) throw new NotFoundError('app');
    if (access === 'admin') throw new DomainError('forbidden', 'this route needs the admin key');
  }

  // A deleted app's rows stay until the worker has torn it down; none of its routes answer meanwhile.
  // A malformed id is left to the route's validation (400 naming the field).
  private async admitAdmin(appId: string | undefined): Promise<void> {
    if (appId !== undefined && AppId.safeParse(appId).success && !(await this.apps.exists(appId))) throw new NotFoundError('app');
  }

  /** The refusal of a request without a valid key; request.ip: the client's address, or the one a proxy on this host (Caddy) forwarded (trustProxy). */
  private async refuse(request: AuthenticatedRequest, unresolved: Unresolved): Promise<never> {
    if (unresolved === 'throttled') {
      throw this.authFailures.refusedBeforeLookup(request.ip) ?? new DomainError('unauthorized', 'unknown or revoked key');
    }
    const refusal = await this.authFailures.refusal(request.ip);
    if (refusal) throw refusal;
    if (unresolved === 'missing') throw new DomainError('unauthorized', 'missing bearer token');
    throw new DomainError('unauthorized', 'unknown or revoked key');
  }
}
