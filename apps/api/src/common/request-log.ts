import type { FastifyInstance } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import type { Logger } from 'pino';

/**
 * One line per finished request with its request id: at debug, or at error when it answered 5xx,
 * so the default level writes nothing per request under load. A Fastify hook, not a middleware
 * binding an AsyncLocalStorage (libs/runtime's logging.ts says why).
 */
export function registerRequestLog(
  fastify: FastifyInstance,
  // The root logger exists once Nest has configured the logger module (app.init).
  rootLogger: () => Logger | undefined = () => PinoLogger.root,
): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const statusCode = reply.statusCode;
    const level = statusCode >= 500 ? 'error' : 'debug';
    const logger = rootLogger();
    if (logger?.isLevelEnabled(level)) {
      logger[level](
        { reqId: request.id, req: { method: request.method, url: request.url }, res: { statusCode }, responseTime: reply.elapsedTime },
        'request completed',
      );
    }
    done();
  });
}
