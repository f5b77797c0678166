import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DynamicModule } from '@nestjs/common';
import type { Config } from '@tally/config';
import { LoggerModule } from 'nestjs-pino';

/**
 * Structured JSON logs (pino) at TALLY_LOG_LEVEL. Inside a request every line carries its `reqId`
 * (the `x-request-id` the API answers with); a finished request is logged at debug, or at error
 * when it answered 5xx, so the default level stays quiet under load.
 */
export function loggerModule(config: Config): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: {
      level: config.logLevel,
      quietReqLogger: true,
      // The API's Fastify instance sets the header (from the client's, or a new UUID) before this runs.
      genReqId: (request: IncomingMessage) => String(request.headers['x-request-id'] ?? ''),
      customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error) =>
        error !== undefined || response.statusCode >= 500 ? 'error' : 'debug',
      serializers: {
        req: (request: { method?: string; url?: string }) => ({ method: request.method, url: request.url }),
        res: (response: { statusCode?: number }) => ({ statusCode: response.statusCode }),
      },
    },
  });
}
