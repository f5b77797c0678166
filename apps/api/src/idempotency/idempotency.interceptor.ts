import { createHash } from 'node:crypto';
import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { catchError, concatMap, defer, finalize, from, type Observable, of, switchMap, throwError } from 'rxjs';
import type { AuthenticatedRequest } from '../tenancy/principal.js';
import { DomainError } from '../common/domain-error.js';
import { IDEMPOTENCY_PENDING_TTL_S, IdempotencyStore } from './idempotency.store.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
/** A running request renews its claim three times per pending TTL, so one late renewal does not lose it. */
const RENEW_EVERY_MS = (IDEMPOTENCY_PENDING_TTL_S * 1_000) / 3;

/**
 * Idempotency-Key on creating POSTs (Stripe's convention): the first request with a key runs and its
 * response is kept 24 h; a retry with the same key and the same body gets that response again
 * (`idempotent-replayed: true`) without creating anything, a different body is a 409, and so is a
 * retry while the first is still running. A failed request keeps nothing, so it may be retried.
 * "Still running" is a claim the request renews while it runs: one that died with its process is
 * forgotten after IDEMPOTENCY_PENDING_TTL_S.
 * Keys are scoped to the caller: two apps may use the same key. Applied by `@Idempotent()` to those
 * routes only: a route without interceptors skips Nest's RxJS interceptor chain altogether.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly store: IdempotencyStore) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers[IDEMPOTENCY_HEADER];
    if (header === undefined) return next.handle();
    const key = Array.isArray(header) ? header[0] : header;
    if (key === undefined || !VALID_KEY.test(key)) {
      throw new DomainError('validation_failed', 'Idempotency-Key must be 1-255 printable ASCII characters', { field: 'Idempotency-Key' });
    }
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const scope = request.principal?.kind === 'app' ? request.principal.appId : 'admin';
    const fingerprint = createHash('sha256')
      .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex');

    return from(this.store.claim(scope, key, fingerprint)).pipe(
      switchMap((held) => {
        if (held === undefined) return this.runFirst(next, scope, key, fingerprint);
        if (held.fingerprint !== fingerprint) {
          throw new DomainError('conflict', 'this Idempotency-Key was used with a different request', { field: 'Idempotency-Key' });
        }
        if (held.state === 'pending') {
          throw new DomainError('conflict', 'a request with this Idempotency-Key is still in progress', { field: 'Idempotency-Key' });
        }
        void reply.header('idempotent-replayed', 'true');
        return of(held.body);
      }),
    );
  }

  /** The route's own status code applies to a replay as to the first response: only the body is kept. */
  private runFirst(next: CallHandler, scope: string, key: string, fingerprint: string): Observable<unknown> {
    return defer(() => {
      const renewing = setInterval(() => void this.store.renew(scope, key, fingerprint).catch(() => undefined), RENEW_EVERY_MS);
      renewing.unref();
      return next.handle().pipe(finalize(() => clearInterval(renewing)));
    }).pipe(
      // The work is done either way; failing to remember it only means a retry would run it again.
      concatMap(async (body: unknown) => {
        await this.store.complete(scope, key, fingerprint, body).catch(() => undefined);
        return body;
      }),
      catchError((error: unknown) =>
        from(this.store.forget(scope, key).catch(() => undefined)).pipe(switchMap(() => throwError(() => error))),
      ),
    );
  }
}
