import type { AppView, CreatedCamera, RateLimitRefusal } from '@tally/contracts';
import { type ApiClient, type ApiResponse, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCamera } from '@tally/testing/camera';
import { type ApiReplicas, createStream, createTenant, startReplicas } from './api-harness.js';

/**
 * Two API processes on one database and Redis; the test client is one client address (loopback). Windows of a minute (and two starts per minute) keep
 * every count inside one window however slow the host is.
 */
describe('per-app rate limits across two API replicas', () => {
  let harness: ApiReplicas | undefined;
  let first: ApiClient;
  let second: ApiClient;

  beforeAll(async () => {
    const env = {
      TALLY_RATE_LIMIT_WINDOW_S: '60',
      TALLY_RATE_LIMIT_START_WINDOW_S: '60',
      TALLY_RATE_LIMIT_STARTS_PER_MINUTE: '2',
      TALLY_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '4',
    };
    harness = await startReplicas(2, { env, logName: 'rl' });
    [first, second] = harness.clients as [ApiClient, ApiClient];
  });
  afterAll(async () => {
    await harness?.stop();
  });

  const setRate = async (appId: string, rateLimits: Record<string, number | null>) => {
    const response = await first.patch<AppView>(`/v1/apps/${appId}`, { rateLimits });
    expect(response.status).toBe(200);
    return response.body;
  };

  it('counts one app’s requests on both replicas against one limit; the 429 says when to retry; other apps are unaffected', async () => {
    const limited = await createTenant(first, 'limited');
    const other = await createTenant(first, 'other');
    const app = await setRate(limited.app.id, { requestsPerMinute: 6 });
    expect(app.rateLimits).toEqual({ requestsPerMinute: 6, startsPerMinute: 2, explicit: { requestsPerMinute: 6 } });

    const replicas = [first.withKey(limited.key.key), second.withKey(limited.key.key)];
    const answered: ApiResponse[] = [];
    for (let i = 0; i < 6; i += 1) answered.push(await replicas[i % 2]!.get(`/v1/apps/${limited.app.id}`));
    expect(answered.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answered.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['5', '4', '3', '2', '1', '0']);

    // The 7th, on either replica, is over the app's 6 per window.
    for (const replica of replicas) {
      const refused = await replica.get<RateLimitRefusal>(`/v1/apps/${limited.app.id}/streams`);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'rate_limited', resource: 'app.requests', limit: 6, windowS: 60 });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.body.error.retryAfterS).toBe(retryAfter);
      expect(refused.headers.get('x-ratelimit-limit')).toBe('6');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(typeof refused.body.requestId).toBe('string');
    }

    // Each replica counted the refusal it answered.
    const metrics = await (await first.withKey(undefined).raw('/metrics')).text();
    expect(metrics).toContain('tally_rate_limited_total{resource="app.requests"} 1');

    // Another app's key, the admin key and unauthenticated routes are counted apart (or not at all).
    expect((await second.withKey(other.key.key).get(`/v1/apps/${other.app.id}`)).status).toBe(200);
    expect((await second.get(`/v1/apps/${limited.app.id}`)).status).toBe(200);
    expect((await second.withKey(undefined).get('/healthz')).status).toBe(200);
  });

  it('with a limit large enough to be leased, concurrent requests on both replicas get exactly the limit through, then only 429s', async () => {
    const busy = await createTenant(first, 'busy');
    // 600 a window: each replica leases 6 at a time from Redis and spends them in process.
    await setRate(busy.app.id, { requestsPerMinute: 600 });
    const path = `/v1/apps/${busy.app.id}`;
    const admitted = [0, 0];
    const refused = [0, 0];
    // Eight callers per replica, each asking until its replica refuses it.
    const caller = async (replicaIndex: number) => {
      const replica = [first, second][replicaIndex]!.withKey(busy.key.key);
      for (;;) {
        const response = await replica.get<RateLimitRefusal>(path);
        if (response.status === 200) {
          admitted[replicaIndex]! += 1;
          continue;
        }
        expect(response.status).toBe(429);
        expect(response.body.error).toMatchObject({ code: 'rate_limited', resource: 'app.requests', limit: 600 });
        refused[replicaIndex]! += 1;
        return;
      }
    };
    await Promise.all([0, 1].flatMap((replicaIndex) => Array.from({ length: 8 }, () => caller(replicaIndex))));

    // Redis grants no unit past the limit, and a replica refuses only once it has spent its lease: together exactly 600.
    expect(admitted[0]! + admitted[1]!).toBe(600);
    expect(admitted[0]).toBeGreaterThan(0);
    expect(admitted[1]).toBeGreaterThan(0);
    expect(refused).toEqual([8, 8]);
    // Later requests on either replica are refused without a lease left anywhere.
    for (const client of [first, second]) expect((await client.withKey(busy.key.key).get(path)).status).toBe(429);
  });

  it('an operator raising one app’s limit on replica A applies on replica B at once, and lowering another’s leaves the first alone', async () => {
    const raised = await createTenant(first, 'raised');
    const lowered = await createTenant(first, 'lowered');
    await setRate(raised.app.id, { requestsPerMinute: 2 });
    const onB = second.withKey(raised.key.key);
    expect((await onB.get(`/v1/apps/${raised.app.id}`)).status).toBe(200);
    expect((await onB.get(`/v1/apps/${raised.app.id}`)).status).toBe(200);
    expect((await onB.get(`/v1/apps/${raised.app.id}`)).status).toBe(429);

    await setRate(raised.app.id, { requestsPerMinute: 1000 });
    // B hears of the change over Redis pub/sub (milliseconds) and reads the app's new policy.
    const after = await waitFor(
      'replica B applying the raised limit',
      async () => {
        const response = await onB.get(`/v1/apps/${raised.app.id}`);
        return response.status === 200 ? response : undefined;
      },
      5_000,
    );
    expect(after.headers.get('x-ratelimit-limit')).toBe('1000');

    await setRate(lowered.app.id, { requestsPerMinute: 1 });
    const loweredOnB = second.withKey(lowered.key.key);
    expect((await loweredOnB.get(`/v1/apps/${lowered.app.id}`)).status).toBe(200);
    expect((await loweredOnB.get(`/v1/apps/${lowered.app.id}`)).status).toBe(429);
    expect((await onB.get(`/v1/apps/${raised.app.id}`)).status).toBe(200);

    // null goes back to the default.
    const reset = await setRate(lowered.app.id, { requestsPerMinute: null });
    expect(reset.rateLimits.requestsPerMinute).toBe(6000);
    expect(reset.rateLimits.explicit).toEqual({});
  });

  it('recording, HLS and ingress starts get the stricter start rate, counted per route, apart from other requests', async () => {
    const starter = await createTenant(first, 'starter');
    const other = await createTenant(first, 'other starter');
    const stream = await createStream(starter.client, starter.app.id);
    // An ended stream: each start is refused (409) after the limiter has counted it, and no egress runs.
    expect((await starter.client.delete(`/v1/apps/${starter.app.id}/streams/${stream.id}`)).status).toBe(200);
    const base = `/v1/apps/${starter.app.id}`;
    const replicas = [first.withKey(starter.key.key), second.withKey(starter.key.key)];
    const starts: ReadonlyArray<(c: ApiClient) => Promise<ApiResponse<RateLimitRefusal>>> = [
      (c) => c.post(`${base}/streams/${stream.id}/recordings`, {}),
      (c) => c.post(`${base}/streams/${stream.id}/hls`, {}),
      (c) => c.post(`${base}/ingresses`, { streamId: stream.id, kind: 'rtmp' }),
    ];

    for (const start of starts) {
      const statuses = [];
      for (const replica of [...replicas, replicas[0]!]) statuses.push(await start(replica));
      expect(statuses.map((r) => r.status)).toEqual([409, 409, 429]);
      const refused = statuses[2]!;
      expect(refused.body.error).toMatchObject({ code: 'rate_limited', resource: 'app.starts', limit: 2, windowS: 60 });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }

    // The app's other requests and another app's starts are not held back.
    expect((await replicas[1]!.get(`${base}/streams/${stream.id}`)).status).toBe(200);
    const otherStream = await createStream(other.client, other.app.id);
    expect((await other.client.delete(`/v1/apps/${other.app.id}/streams/${otherStream.id}`)).status).toBe(200);
    expect((await other.client.post(`/v1/apps/${other.app.id}/streams/${otherStream.id}/recordings`, {})).status).toBe(409);

    // The operator raises this app's start rate: its next start passes the limiter (and meets the ended stream).
    await setRate(starter.app.id, { startsPerMinute: 60 });
    const raised = await waitFor(
      'the raised start rate',
      async () => {
        const response = await starts[0]!(replicas[1]!);
        return response.status === 409 ? response : undefined;
      },
      5_000,
    );
    expect(raised.headers.get('x-ratelimit-limit')).toBe('60');
  });

  it('bad keys from one client get 401 up to its limit on either replica, then 429; its valid key and other clients still get through', async () => {
    const office = await createTenant(first, 'office');
    const path = `/v1/apps/${office.app.id}`;
    const guessers = [first.withKey('tk_guessed'), second.withKey('tk_guessed'), first.withKey(undefined), second.withKey('tk_guessed')];
    const failed: ApiResponse[] = [];
    for (const guesser of guessers) failed.push(await guesser.get(path));
    expect(failed.map((r) => r.status)).toEqual([401, 401, 401, 401]);

    // The 5th failure from this client, on either replica, is over its 4 a minute.
    for (const replica of [first, second]) {
      const refused = await replica.withKey('tk_guessed').get<RateLimitRefusal>(path);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'rate_limited', resource: 'client.auth_failures', limit: 4, windowS: 60 });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.body.error.retryAfterS).toBe(retryAfter);
    }
    expect((await second.withKey(undefined).get(path)).status).toBe(429);

    // Valid keys from the same address (an office behind one NAT) are not locked out, nor are public routes.
    expect((await first.withKey(office.key.key).get(path)).status).toBe(200);
    expect((await second.withKey(office.key.key).get(path)).status).toBe(200);
    expect((await second.get(path)).status).toBe(200);
    expect((await first.withKey(undefined).get('/healthz')).status).toBe(200);

    // Another client, forwarded by a proxy on this host (as Caddy does), has its own count.
    const forwarded = await second.withKey('tk_guessed').raw(path, { 'x-forwarded-for': '203.0.113.9' });
    expect(forwarded.status).toBe(401);

    const metrics = await (await first.withKey(undefined).raw('/metrics')).text();
    expect(metrics).toContain('tally_rate_limited_total{resource="client.auth_failures"} 1');
  });

  it('counts wrong camera viewer tokens and camera keys as failed authentications of the client', async () => {
    const owner = await createTenant(first, 'watcher');
    // The owner from an address of its own: loopback is over its budget since the test above.
    const ownerAddress = { 'x-forwarded-for': '203.0.113.80' };
    const camera = (await owner.client.request<CreatedCamera>('POST', `/v1/apps/${owner.app.id}/cameras`, { name: 'door' }, ownerAddress))
      .body;
    const frame = `/v1/apps/${owner.app.id}/cameras/${camera.id}/frame.jpg`;
    const guesser = { 'x-forwarded-for': '203.0.113.77' };
    const statuses: number[] = [];
    for (const replica of [first, second, first, second, first]) {
      statuses.push((await replica.withKey(undefined).raw(`${frame}?token=cvt1.guess${statuses.length}.sig`, guesser)).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    const refused = await second.withKey(undefined).raw(`${frame}?token=cvt1.again.sig`, guesser);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as RateLimitRefusal).error).toMatchObject({ resource: 'client.auth_failures', limit: 4 });
    // The same client's wrong camera key is refused too; a valid viewer token from it is not a failure.
    await expect(TestCamera.connect(camera.ingestUrl, { authorization: 'Bearer ck_wrong', ...guesser })).rejects.toThrow(/429/);
    const token = (
      await owner.client.request<{ token: string }>(
        'POST',
        `/v1/apps/${owner.app.id}/cameras/${camera.id}/tokens`,
        { ttlS: 60 },
        ownerAddress,
      )
    ).body.token;
    // 404 (no frame yet), not 401 or 429: the token was checked and admitted.
    expect((await first.withKey(undefined).raw(`${frame}?token=${token}`, { 'x-forwarded-for': '203.0.113.78' })).status).toBe(404);
  });
});
