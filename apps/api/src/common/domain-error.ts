import type { ErrorCode } from '@tally/contracts';

/** A failure the caller can act on; mapped to HTTP in one place (HttpErrorFilter). */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export class NotFoundError extends DomainError {
  constructor(what: string) {
    super('not_found', `${what} not found`);
  }
}

export type LimitDetails = Readonly<{
  resource: string;
  nodeId?: string;
  heldResource?: string;
  limit: number;
  used: number;
  requested: number;
  retryAfterS?: number;
}>;

/** Admission refused: the app's quota (quota_exceeded) or the node pool (capacity_exhausted); a 429 naming the resource. */
export class LimitRefusedError extends DomainError {
  constructor(
    code: 'quota_exceeded' | 'capacity_exhausted',
    readonly limit: LimitDetails,
  ) {
    super(
      code,
      code === 'quota_exceeded'
        ? `${limit.resource} quota reached: ${limit.used} of ${limit.limit} in use`
        : limit.heldResource !== undefined
          ? `the rest of the pool's ${limit.heldResource} is guaranteed to other apps: ${limit.limit} is left outside guarantees, ${limit.used} is in use, ${limit.requested} more requested`
          : `${limit.resource} exhausted: ${limit.used} of ${limit.limit} in use, ${limit.requested} more requested`,
    );
  }
}

/**
 * A 503 naming the service only: what the service answered (addresses, paths, its own messages)
 * stays in the log (HttpErrorFilter logs `cause`), never in the body.
 */
export class UpstreamUnavailableError extends DomainError {
  constructor(service: string, cause: unknown) {
    super('upstream_unavailable', `${service} is unavailable`, { service }, { cause });
  }
}

export type RateLimitDetails = Readonly<{
  /** `app.requests`, `app.starts` or `admin.requests`. */
  resource: string;
  limit: number;
  windowS: number;
  retryAfterS: number;
}>;

/** Too many requests from one app (or the admin key) in the window: a 429 with Retry-After. */
export class RateLimitedError extends DomainError {
  constructor(readonly rate: RateLimitDetails) {
    super('rate_limited', `${rate.resource} rate limit reached: ${rate.limit} per ${rate.windowS} s; retry in ${rate.retryAfterS} s`);
  }
}
