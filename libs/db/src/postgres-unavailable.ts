import { Prisma } from './generated/client.js';

/** Prisma's codes for a server it cannot reach, that timed out, closed the connection or has no connection free. */
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
/** The driver adapter's kinds for the same, which raw queries carry under their own code (P2010). */
const UNREACHABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/** SQLSTATEs of a server shutting down, starting up or crashed (class 57P), and of lost connections (class 08). */
const UNAVAILABLE_SQLSTATE = /^(08|57P0[123])/;
/** node-postgres' own messages for a connection the server dropped or never gave. */
const POOL_MESSAGES = [
  'Connection terminated unexpectedly',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
];
/**
 * Prisma's transaction errors (P2028) when the server was too slow: no connection for the
 * transaction within its wait, or the transaction outlived its timeout (rolled back, nothing kept).
 */
const TRANSACTION_TIMEOUTS = [/Unable to start a transaction in the given time/, /cannot be executed on an expired transaction/];

/**
 * Whether `error` says PostgreSQL is unreachable right now (down, restarting, failing over), as
 * opposed to a query it refused: a request that met it is answered 503 naming PostgreSQL, not 500.
 */
export function isPostgresUnavailable(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientInitializationError) return true;
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (UNREACHABLE_CODES.has(error.code)) return true;
    if (error.code === 'P2028') return TRANSACTION_TIMEOUTS.some((pattern) => pattern.test(error.message));
    const cause = adapterCause(error.meta);
    return UNREACHABLE_KINDS.has(cause.kind ?? '') || UNAVAILABLE_SQLSTATE.test(cause.sqlState ?? '');
  }
  if (!(error instanceof Error)) return false;
  return POOL_MESSAGES.some((message) => error.message.includes(message));
}

/** What the driver adapter said (its kind, and the server's SQLSTATE when the server answered), kept on the error it hands Prisma. */
function adapterCause(meta: Record<string, unknown> | undefined): { kind?: string; sqlState?: string } {
  const adapterError = meta?.['driverAdapterError'];
  if (typeof adapterError !== 'object' || adapterError === null || !('cause' in adapterError)) return {};
  const { cause } = adapterError;
  if (typeof cause !== 'object' || cause === null) return {};
  const kind = 'kind' in cause && typeof cause.kind === 'string' ? cause.kind : undefined;
  const sqlState = 'originalCode' in cause && typeof cause.originalCode === 'string' ? cause.originalCode : undefined;
  return { ...(kind ? { kind } : {}), ...(sqlState ? { sqlState } : {}) };
}
