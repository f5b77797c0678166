import type { DynamicModule } from '@nestjs/common';
import type { Config } from '@tally/config';
import { LoggerModule } from 'nestjs-pino';

/**
 * Structured JSON logs (pino) at TALLY_LOG_LEVEL, one root logger for Nest's and Tally's lines.
 *
 * No per-request logger middleware: nestjs-pino's binds each request's logger with an
 * AsyncLocalStorage, and on Node 20 the first AsyncLocalStorage `run` turns on promise hooks for
 * the whole process, which cost the API about 12 µs of CPU on every request (15 % of a token
 * mint; docs/capacity.md). The request id is on the response (`x-request-id`, and `requestId` in
 * error bodies), on the request's own log line (the API's request-log hook) and in the line of a
 * request that failed with a 500; lines services write while serving a request do not carry it.
 */
export function loggerModule(config: Config): DynamicModule {
  return LoggerModule.forRoot({ forRoutes: [], pinoHttp: { level: config.logLevel } });
}
