import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { UpstreamUnavailableError } from './domain-error.js';
import { sendError } from './http-error.filter.js';

describe(sendError.name, () => {
  it('answers an unavailable upstream with 503 naming the service only, never what the service said', async () => {
    const sut = Fastify();
    const upstream = new Error('connect ECONNREFUSED 10.1.2.3:7880 (twirp /livekit.RoomService/CreateRoom: secret detail)');
    sut.get('/', (request, reply) => sendError(request, reply, new UpstreamUnavailableError('livekit', upstream)));

    const answer = await sut.inject({ url: '/' });

    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({
      error: { code: 'upstream_unavailable', message: 'livekit is unavailable', details: { service: 'livekit' } },
    });
    expect(answer.body).not.toMatch(/ECONNREFUSED|10\.1\.2\.3|secret detail/);
    await sut.close();
  });

  it.each([
    [
      'a command that waited through its reconnects',
      Object.assign(new Error('Reached the max retries per request limit (which is 3).'), { name: 'MaxRetriesPerRequestError' }),
    ],
    ['a closed connection', new Error('Connection is closed.')],
    ['a promoted replica loading its data', new Error('LOADING Redis is loading the dataset in memory')],
  ])('answers Redis without a server (%s) with 503 naming Redis', async (_case, error) => {
    const sut = Fastify();
    sut.get('/', (request, reply) => sendError(request, reply, error));

    const answer = await sut.inject({ url: '/' });

    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ error: { code: 'upstream_unavailable', details: { service: 'redis' } } });
    await sut.close();
  });

  it('still answers an unknown failure with a bare 500', async () => {
    const sut = Fastify();
    sut.get('/', (request, reply) => sendError(request, reply, new Error('something else')));

    const answer = await sut.inject({ url: '/' });

    expect(answer.statusCode).toBe(500);
    expect(answer.json()).toMatchObject({ error: { code: 'internal', message: 'internal error' } });
    await sut.close();
  });
});
