import type { Config } from '@tally/config';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrincipalResolver } from '../tenancy/principal-resolver.js';
import type { AppRateLimits } from './app-rates.js';
import { RateLimitMetrics } from './rate-limit.metrics.js';
import { asConnection, fakeLeaseRedis } from '../../test/fake-lease-redis.js';
import { RATE_LIMIT_CONFIG_KEY } from '../routes/rate-limit-class.js';
import { ApiRateLimiter, perWindow } from './rate-limiter.js';

const config = {
  rateLimit: { requestsPerMinute: 0, startsPerMinute: 0, adminPerMinute: 60, windowS: 10, startWindowS: 10 },
} as unknown as Config;

/** `inProcess`: the key and the app's rates are answered at once (held in process), as for every request after an app's first. */
async function setup({ inProcess = false } = {}) {
  const redis = fakeLeaseRedis(1_500);
  const principalOf = (header: string | undefined) =>
    header === 'Bearer app-key'
      ? { kind: 'app' as const, appId: 'app_1', keyId: 'key_1' }
      : header === 'Bearer admin'
        ? { kind: 'admin' as const }
        : 'missing';
  const principals = {
    ofRequest: ({ headers: { authorization: header } }: { headers: { authorization?: string } }) =>
      inProcess ? principalOf(header) : Promise.resolve(principalOf(header)),
  } as unknown as PrincipalResolver;
  const appRates = { requestsPerMinute: 12, startsPerMinute: 6 };
  const rates = {
    cached: () => (inProcess ? appRates : undefined),
    of: () => Promise.resolve(appRates),
  } as unknown as AppRateLimits;
  const metrics = new RateLimitMetrics();
  const sut = new ApiRateLimiter(principals, rates, asConnection(redis), metrics, config);
  const fastify = Fastify();
  sut.register(fastify);
  fastify.get('/read', () => ({ ok: true }));
  fastify.post('/start', { config: { [RATE_LIMIT_CONFIG_KEY]: 'start' } }, () => ({ started: true }));
  await fastify.ready();
  return { fastify, redis, metrics };
}

describe(ApiRateLimiter.name, () => {
  let fastify: FastifyInstance | undefined;
  afterEach(() => fastify?.close());

  it.each([false, true])(
    'refuses an app over its window with 429 rate_limited, Retry-After and the x-ratelimit headers (in process: %s)',
    async (inProcess) => {
      const t = await setup({ inProcess });
      fastify = t.fastify;
      const read = () => t.fastify.inject({ url: '/read', headers: { authorization: 'Bearer app-key' } });

      const answers = [await read(), await read(), await read()];

      expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 429]);
      expect(answers[0]!.headers['x-ratelimit-remaining']).toBe('1');
      const refused = answers[2]!;
      expect(refused.headers['retry-after']).toBe('9');
      expect(refused.headers['x-ratelimit-limit']).toBe('2');
      expect(refused.json()).toMatchObject({
        error: { code: 'rate_limited', resource: 'app.requests', limit: 2, windowS: 10, retryAfterS: 9 },
        requestId: expect.any(String) as unknown,
      });
      expect((await t.metrics.counter.get()).values).toEqual([{ labels: { resource: 'app.requests' }, value: 1 }]);
    },
  );

  it.each([false, true])(
    'counts a start route against the start rate on its own counter, and requests without a key not at all (in process: %s)',
    async (inProcess) => {
      const t = await setup({ inProcess });
      fastify = t.fastify;
      const start = () => t.fastify.inject({ method: 'POST', url: '/start', headers: { authorization: 'Bearer app-key' } });

      expect([(await start()).statusCode, (await start()).statusCode]).toEqual([200, 429]);
      expect((await start()).json()).toMatchObject({ error: { resource: 'app.starts', limit: 1 } });
      expect((await t.fastify.inject({ url: '/read', headers: { authorization: 'Bearer app-key' } })).statusCode).toBe(200);
      for (let i = 0; i < 5; i += 1) expect((await t.fastify.inject({ url: '/read' })).headers['x-ratelimit-limit']).toBeUndefined();
    },
  );

  it('lets requests through uncounted while Redis is down or reconnecting, never answering 500', async () => {
    const t = await setup();
    fastify = t.fastify;
    const read = () => t.fastify.inject({ url: '/read', headers: { authorization: 'Bearer admin' } });

    t.redis.down = true;
    const whileDown = await read();
    t.redis.status = 'reconnecting';
    const whileReconnecting = await read();

    expect([whileDown.statusCode, whileReconnecting.statusCode]).toEqual([200, 200]);
    expect(whileDown.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('turns a per-minute rate into a window’s count, never below one', () => {
    expect(perWindow(6000, 10)).toBe(1000);
    expect(perWindow(60, 5)).toBe(5);
    expect(perWindow(1, 5)).toBe(1);
  });
});
