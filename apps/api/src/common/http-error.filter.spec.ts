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
});
