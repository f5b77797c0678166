import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CONFIG, type Config } from '@tally/config';
import { AppId } from '@tally/contracts';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { LiveApps } from '../apps/live-apps.js';
import { ApiKeyCache } from './key-cache.js';
import { hashKey, sameSecret } from './key-hash.js';
import { KeyUsageRecorder } from './key-usage.js';
import { ACCESS, type Access, type AuthenticatedRequest, type Principal } from './principal.js';

/**
 * Bearer auth for every route. An app key only opens routes of its own app;
 * another app's id answers 404 so ids of other tenants cannot be probed.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyCache,
    private readonly usage: KeyUsageRecorder,
    private readonly apps: LiveApps,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<Access | undefined>(ACCESS, [context.getHandler(), context.getClass()]) ?? 'app';
    if (access === 'public') return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = await this.authenticate(request.headers.authorization);
    request.principal = principal;

    const params = request.params as Record<string, string | undefined>;
    if (principal.kind === 'admin') {
      // A deleted app's rows stay until the worker has torn it down; none of its routes answer meanwhile.
      // A malformed id is left to the route's validation (400 naming the field).
      if (params.appId !== undefined && AppId.safeParse(params.appId).success && !(await this.apps.exists(params.appId))) {
        throw new NotFoundError('app');
      }
      return true;
    }
    if (params.appId !== undefined && params.appId !== principal.appId) throw new NotFoundError('app');
    if (access === 'admin') throw new DomainError('forbidden', 'this route needs the admin key');
    return true;
  }

  private async authenticate(header: string | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    const presented = match?.[1];
    if (!presented) throw new DomainError('unauthorized', 'missing bearer token');
    if (this.config.adminKey !== undefined && sameSecret(presented, this.config.adminKey)) return { kind: 'admin' };
    const key = await this.keys.findActive(hashKey(presented));
    if (!key) throw new DomainError('unauthorized', 'unknown or revoked key');
    this.usage.record(key.id);
    return { kind: 'app', appId: key.appId, keyId: key.id };
  }
}
