import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { DiscoveryService, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Config } from '@tally/config';
import { Logger } from 'nestjs-pino';
import { ApiModule } from './app.module.js';
import { AuthGuard } from './pipeline/auth.guard.js';
import { registerDirectRoutes } from './pipeline/direct-routes.js';
import { registerRequestLog } from './common/request-log.js';
import { registerStaticFiles } from './common/static-files.js';
import { registerWebSockets } from './common/web-sockets.js';
import { CameraSockets } from './cameras/camera-sockets.js';
import { HttpMetrics } from './metrics/http.metrics.js';
import { ApiRateLimiter } from './rate-limit/rate-limiter.js';

const BODY_LIMIT = 1024 * 1024;

/** The production bootstrap; tests start the API through this same function. */
export async function createApi(config: Config, options: { logger?: false } = {}): Promise<NestFastifyApplication> {
  const quiet = options.logger === false;
  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: BODY_LIMIT,
    // A client's own x-request-id is kept; otherwise a new UUID (genReqId).
    requestIdHeader: 'x-request-id',
    // request.ip is the client behind a proxy on this host (the installed Caddy), never an
    // X-Forwarded-For a remote client sent itself: only loopback peers are trusted to forward.
    trustProxy: 'loopback',
    genReqId: () => randomUUID(),
  });
  // LiveKit signs the exact bytes it sends, so webhook bodies stay unparsed strings.
  adapter.getInstance().addContentTypeParser('application/webhook+json', { parseAs: 'string' }, (_request, body, done) => {
    done(null, body);
  });
  await registerStaticFiles(adapter.getInstance());
  await registerWebSockets(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(
    ApiModule.forRoot(quiet ? { ...config, logLevel: 'silent' } : config),
    adapter,
    {
      ...(quiet ? { logger: false } : { bufferLogs: true }),
      abortOnError: false,
      // JSON bodies go to Fastify's own parser (the same secure-json-parse, errors and body limit):
      // Nest's replacement reads each body as a Buffer and builds a parser per request.
      bodyParser: false,
    },
  );
  // Form bodies as Nest parses them by default.
  app.useBodyParser('application/x-www-form-urlencoded', { bodyLimit: BODY_LIMIT });
  if (!quiet) app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  // Callback-style hooks here and in HttpMetrics: an async hook costs a promise per request. The
  // request id is set as the request arrives, not in an onSend hook: error replies keep the headers
  // set before them, and a route without onSend hooks skips Fastify's onSend runner.
  adapter.getInstance().addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  // First of the request hooks: a refused request costs no body parsing, metrics still count it.
  app.get(ApiRateLimiter).register(adapter.getInstance());
  app.get(HttpMetrics).attach(adapter.getInstance());
  registerRequestLog(adapter.getInstance());
  app.get(CameraSockets).register(adapter.getInstance());
  // Before app.init(), where Nest registers its routes: the hot routes marked @DirectRoute().
  registerDirectRoutes(adapter.getInstance(), app.get(DiscoveryService), app.get(AuthGuard));
  await app.init();
  return app;
}

export async function startApi(config: Config, options: { logger?: false } = {}): Promise<NestFastifyApplication> {
  const app = await createApi(config, options);
  await app.listen({ host: config.http.host, port: config.http.port });
  return app;
}
