import { describe, expect, it } from 'vitest';
import { Prisma } from './generated/client.js';
import { isPostgresUnavailable } from './postgres-unavailable.js';

const known = (code: string, meta?: Record<string, unknown>) =>
  new Prisma.PrismaClientKnownRequestError('failed', { code, clientVersion: 'test', ...(meta ? { meta } : {}) });
const fromServer = (sqlState: string) => known('P2039', { driverAdapterError: { cause: { kind: 'postgres', originalCode: sqlState } } });

describe('isPostgresUnavailable', () => {
  it('reads an unreachable, closed or exhausted server as unavailable', () => {
    for (const code of ['P1001', 'P1017', 'P1008', 'P2024']) expect(isPostgresUnavailable(known(code))).toBe(true);
    const rawQuery = known('P2010', { driverAdapterError: { cause: { kind: 'DatabaseNotReachable', host: '127.0.0.1' } } });
    expect(isPostgresUnavailable(rawQuery)).toBe(true);
    expect(isPostgresUnavailable(new Prisma.PrismaClientInitializationError("Can't reach database server", 'test'))).toBe(true);
  });

  it('reads a server shutting down, starting up or crashed as unavailable', () => {
    for (const state of ['57P01', '57P02', '57P03', '08006']) expect(isPostgresUnavailable(fromServer(state))).toBe(true);
    expect(isPostgresUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('reads a transaction the server was too slow for as unavailable, and a misused one as it is', () => {
    const transaction = (message: string) =>
      new Prisma.PrismaClientKnownRequestError(`Transaction API error: ${message}`, { code: 'P2028', clientVersion: 'test' });
    expect(isPostgresUnavailable(transaction('Unable to start a transaction in the given time.'))).toBe(true);
    const expired =
      'A commit cannot be executed on an expired transaction. The timeout for this transaction was 5000 ms, however 5012 ms passed since the start of the transaction.';
    expect(isPostgresUnavailable(transaction(expired))).toBe(true);
    expect(isPostgresUnavailable(transaction('Transaction not found.'))).toBe(false);
    expect(isPostgresUnavailable(transaction('Transaction already closed: A query cannot be executed on a committed transaction.'))).toBe(
      false,
    );
  });

  it('leaves the errors of a query the server refused to be answered as they are', () => {
    expect(isPostgresUnavailable(known('P2002'))).toBe(false);
    expect(isPostgresUnavailable(fromServer('23505'))).toBe(false);
    expect(isPostgresUnavailable(fromServer('42P01'))).toBe(false);
    expect(isPostgresUnavailable(known('P2010', { driverAdapterError: { cause: { kind: 'UniqueConstraintViolation' } } }))).toBe(false);
    expect(isPostgresUnavailable(new Error('boom'))).toBe(false);
    expect(isPostgresUnavailable('P1001')).toBe(false);
  });
});
