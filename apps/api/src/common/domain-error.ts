import type { ErrorCode } from '@tally/contracts';

/** A failure the caller can act on; mapped to HTTP in one place (HttpErrorFilter). */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export class NotFoundError extends DomainError {
  constructor(what: string) {
    super('not_found', `${what} not found`);
  }
}

export type LimitDetails = Readonly<{
  resource: string;
  limit: number;
  used: number;
  requested: number;
  retryAfterS?: number;
}>;

/** An app's own limit was reached (429 quota_exceeded). */
export class QuotaExceededError extends DomainError {
  constructor(readonly limit: LimitDetails) {
    super('quota_exceeded', `${limit.resource} quota reached: ${limit.used} of ${limit.limit} in use`);
  }
}

export class UpstreamUnavailableError extends DomainError {
  constructor(service: string, cause: unknown) {
    super('upstream_unavailable', `${service} is unavailable`, {
      service,
      reason: cause instanceof Error ? cause.message : String(cause),
    });
  }
}
