import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { registerRequestLog } from './request-log.js';

type Line = { level: number; reqId: string; msg: string; req: { method: string; url: string }; res: { statusCode: number } };

function server(level: string) {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Line);
      done();
    },
  });
  const logger = pino({ level }, sink);
  const app = Fastify({ requestIdHeader: 'x-request-id', genReqId: () => 'generated-id' });
  registerRequestLog(app, () => logger);
  app.get('/ok', () => ({ ok: true }));
  app.get('/boom', (_request, reply) => reply.code(500).send({ error: 'internal' }));
  return { app, lines };
}

describe(registerRequestLog.name, () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it('writes one line per request with its request id at debug', async () => {
    const { app, lines } = server('debug');
    close = () => app.close();
    await app.inject({ method: 'GET', url: '/ok', headers: { 'x-request-id': 'client-id' } });
    await app.inject({ method: 'GET', url: '/ok' });
    expect(lines).toMatchObject([
      { level: 20, reqId: 'client-id', msg: 'request completed', req: { method: 'GET', url: '/ok' }, res: { statusCode: 200 } },
      { level: 20, reqId: 'generated-id' },
    ]);
  });

  it('at info writes nothing for a 2xx and an error line with the request id for a 5xx', async () => {
    const { app, lines } = server('info');
    close = () => app.close();
    await app.inject({ method: 'GET', url: '/ok' });
    await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'failing' } });
    expect(lines).toMatchObject([{ level: 50, reqId: 'failing', res: { statusCode: 500 } }]);
    expect(lines).toHaveLength(1);
  });
});
