import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import type { FastifyRequest } from 'fastify';
import { bearerToken } from '../tenancy/bearer.js';
import { sameSecret } from '../tenancy/key-hash.js';
import { DomainError } from '../common/domain-error.js';

export type MetricsAccess = 'allowed' | 'unauthorized' | 'forbidden';

/**
 * With a token configured, /metrics needs it as a Bearer token (from anywhere); without one, only
 * loopback clients (a Prometheus on the same host) may scrape.
 */
export function metricsAccess(
  token: string | undefined,
  authorization: string | undefined,
  remoteAddress: string | undefined,
): MetricsAccess {
  if (token === undefined) return isLoopback(remoteAddress) ? 'allowed' : 'forbidden';
  const presented = bearerToken(authorization);
  if (presented === undefined) return 'unauthorized';
  return sameSecret(presented, token) ? 'allowed' : 'forbidden';
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** The /metrics route is public to the API-key guard and checked here instead. */
@Injectable()
export class MetricsAccessGuard implements CanActivate {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  canActivate(context: ExecutionContext): boolean {
    // The socket's address, not request.ip: a forwarded-for header must not make a client loopback.
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const access = metricsAccess(this.config.metricsToken, request.headers.authorization, request.socket.remoteAddress);
    switch (access) {
      case 'allowed':
        return true;
      case 'unauthorized':
        throw new DomainError('unauthorized', 'missing bearer token (TALLY_METRICS_TOKEN)');
      case 'forbidden':
        throw new DomainError(
          'forbidden',
          this.config.metricsToken === undefined
            ? 'metrics are served to loopback clients only unless TALLY_METRICS_TOKEN is set'
            : 'wrong metrics token',
        );
    }
  }
}
