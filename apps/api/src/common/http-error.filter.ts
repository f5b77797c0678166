import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { ErrorCode } from '@tally/contracts';
import { isPostgresUnavailable } from '@tally/db';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, LimitRefusedError, RateLimitedError, UpstreamUnavailableError } from './domain-error.js';
import { isRedisUnavailable } from './redis-unavailable.js';

export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  quota_exceeded: 429,
  capacity_exhausted: 429,
  rate_limited: 429,
  upstream_unavailable: 503,
  internal: 500,
};

/** The one place where errors become HTTP responses. A 500 never leaks internals. */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), exception);
  }
}

const logger = new Logger(HttpErrorFilter.name);

/** The request once the auth guard has named its principal (tenancy/principal.ts); only the admin sees node ids. */
type SeenBy = Readonly<{ principal?: Readonly<{ kind: string }> }>;

/**
 * Answers `exception` in the API's error shape. Nest's routes reach it through the filter; the
 * WebSocket routes (plain Fastify routes) through their error handler, so a refused upgrade reads
 * like any refused request.
 */
export function sendError(request: FastifyRequest, reply: FastifyReply, exception: unknown): void {
  const requestId = String(request.id);
  if (exception instanceof LimitRefusedError) {
    // Which node came closest to fitting is the operator's business; an app key (or a viewer) is not told node ids.
    const { nodeId, ...shown } = exception.limit;
    const limit = (request as SeenBy).principal?.kind === 'admin' && nodeId !== undefined ? { ...shown, nodeId } : shown;
    if (limit.retryAfterS !== undefined) void reply.header('retry-after', String(limit.retryAfterS));
    void reply.status(429).send({ error: { code: exception.code, message: exception.message, ...limit }, requestId });
    return;
  }
  if (exception instanceof RateLimitedError) {
    void reply.header('retry-after', String(exception.rate.retryAfterS));
    void reply.status(429).send({ error: { code: exception.code, message: exception.message, ...exception.rate }, requestId });
    return;
  }
  if (exception instanceof DomainError) {
    if (exception.cause !== undefined) {
      const { cause } = exception;
      logger.warn(`request ${requestId}: ${exception.message}: ${cause instanceof Error ? cause.message : JSON.stringify(cause)}`);
    }
    const body = { code: exception.code, message: exception.message, ...(exception.details ? { details: exception.details } : {}) };
    void reply.status(ERROR_STATUS[exception.code]).send({ error: body, requestId });
    return;
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code: ErrorCode = status === 404 ? 'not_found' : status < 500 ? 'validation_failed' : 'internal';
    void reply.status(status).send({ error: { code, message: exception.message }, requestId });
    return;
  }
  const fastifyStatus = clientErrorStatus(exception);
  if (fastifyStatus !== undefined) {
    const message = exception instanceof Error ? exception.message : 'bad request';
    void reply.status(fastifyStatus).send({ error: { code: 'validation_failed', message }, requestId });
    return;
  }
  if (isRedisUnavailable(exception)) {
    sendError(request, reply, new UpstreamUnavailableError('redis', exception));
    return;
  }
  if (isPostgresUnavailable(exception)) {
    sendError(request, reply, new UpstreamUnavailableError('postgres', exception));
    return;
  }
  logger.error(`request ${requestId} failed`, exception instanceof Error ? exception.stack : String(exception));
  void reply.status(500).send({ error: { code: 'internal', message: 'internal error' }, requestId });
}

/** Fastify's own client errors (malformed JSON, wrong content type) carry a 4xx statusCode. */
function clientErrorStatus(exception: unknown): number | undefined {
  if (typeof exception !== 'object' || exception === null || !('statusCode' in exception)) return undefined;
  const status = exception.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}
