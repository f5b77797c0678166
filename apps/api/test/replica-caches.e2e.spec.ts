import { dispose, Room } from '@livekit/rtc-node';
import type { ApiKeyList, AppView, StreamToken, StreamView } from '@tally/contracts';
import { type ApiClient, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiReplicas, createStream, createTenant, startReplicas } from './api-harness.js';

/** Keys, open streams and apps' quota policies are cached in each API process; these run two processes on one database and Redis. */
describe('caches of two API replicas', () => {
  let harness: ApiReplicas | undefined;
  let first: ApiClient;
  let second: ApiClient;

  beforeAll(async () => {
    harness = await startReplicas(2, { logName: 'keys' });
    [first, second] = harness.clients as [ApiClient, ApiClient];
  });
  afterAll(async () => {
    await harness?.stop();
    await dispose();
  });

  it('a key revoked on replica A is refused by replica B, which had it cached', async () => {
    const { app, key } = await createTenant(first, 'revoked on a');
    const onA = first.withKey(key.key);
    const onB = second.withKey(key.key);
    // Both replicas have authenticated (and cached) the key.
    for (const client of [onA, onB, onB]) expect((await client.get<AppView>(`/v1/apps/${app.id}`)).status).toBe(200);

    expect((await first.delete(`/v1/apps/${app.id}/keys/${key.id}`)).status).toBe(204);

    expect((await onA.get(`/v1/apps/${app.id}`)).status).toBe(401);
    // The eviction travels over Redis pub/sub: B refuses as soon as the message arrives (milliseconds),
    // long before its cache entry would expire (a minute).
    await waitFor(
      'replica B refusing the revoked key',
      async () => ((await onB.get(`/v1/apps/${app.id}`)).status === 401 ? true : undefined),
      5_000,
    );
    const refused = await onB.get<{ error: { code: string } }>(`/v1/apps/${app.id}`);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
  });

  it('deleting an app makes its cached keys unknown on every replica', async () => {
    const { app, key } = await createTenant(first, 'deleted on b');
    const onA = first.withKey(key.key);
    expect((await onA.get(`/v1/apps/${app.id}`)).status).toBe(200);

    expect((await second.delete(`/v1/apps/${app.id}`)).status).toBe(204);

    await waitFor(
      'replica A refusing the deleted app key',
      async () => ((await onA.get(`/v1/apps/${app.id}`)).status === 401 ? true : undefined),
      5_000,
    );
  });

  it('an app deleted on replica B is gone for the admin on replica A, which knew it', async () => {
    const { app } = await createTenant(first, 'admin sees it go');
    // Replica A has looked the app up for the admin, on a route that only needs to know it exists.
    for (let i = 0; i < 2; i += 1) expect((await first.post(`/v1/apps/${app.id}/streams`, { name: 'before' })).status).toBe(201);

    expect((await second.delete(`/v1/apps/${app.id}`)).status).toBe(204);

    await waitFor(
      'replica A answering 404 for the deleted app',
      async () => ((await first.post(`/v1/apps/${app.id}/streams`, { name: 'after' })).status === 404 ? true : undefined),
      5_000,
    );
    expect((await first.post(`/v1/apps/${app.id}/capacity/check`, { kind: 'stream', count: 1 })).status).toBe(404);
  });

  it('another key of the same app keeps working, and used keys get lastUsedAt', async () => {
    const { app, key } = await createTenant(first, 'two keys');
    const other = (await first.post<{ key: string; id: string }>(`/v1/apps/${app.id}/keys`)).body;
    expect((await second.withKey(other.key).get(`/v1/apps/${app.id}`)).status).toBe(200);
    expect((await first.delete(`/v1/apps/${app.id}/keys/${key.id}`)).status).toBe(204);
    expect((await second.withKey(other.key).get(`/v1/apps/${app.id}`)).status).toBe(200);
    // lastUsedAt is written in batches (every 10 s).
    const used = await waitFor(
      'lastUsedAt written',
      async () =>
        (await first.get<ApiKeyList>(`/v1/apps/${app.id}/keys`)).body.items.find((k) => k.id === other.id && k.lastUsedAt !== null),
      20_000,
    );
    expect(Date.parse(used.lastUsedAt!)).toBeLessThanOrEqual(Date.now());
  });

  it('a cap lowered on replica A is honoured by admission on replica B, which had the policy cached', async () => {
    const { app, key } = await createTenant(first, 'cap lowered on a', { maxStreams: 5 });
    const onB = second.withKey(key.key);
    const check = () =>
      onB.post<{ admitted: boolean; resource?: string; limit?: number }>(`/v1/apps/${app.id}/capacity/check`, { kind: 'stream', count: 1 });
    expect((await onB.post(`/v1/apps/${app.id}/streams`, { name: 'one' })).status).toBe(201);
    // Replica B has read (and kept) the app's policy: a stream more fits under 5.
    for (let i = 0; i < 2; i += 1) expect((await check()).body).toMatchObject({ admitted: true });

    expect((await first.patch(`/v1/apps/${app.id}`, { quotas: { maxStreams: 1 } })).status).toBe(200);

    // The change travels over Redis pub/sub (milliseconds); the copy would otherwise live a minute.
    const refused = await waitFor('replica B checking against the lowered cap', async () => {
      const r = await check();
      return r.body.admitted ? undefined : r.body;
    });
    expect(refused).toMatchObject({ admitted: false, resource: 'app.streams', limit: 1 });
    const create = await onB.post<{ error: { code: string; resource: string } }>(`/v1/apps/${app.id}/streams`, { name: 'two' });
    expect(create.status).toBe(429);
    expect(create.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams' });

    // Raised again on A: B admits at once (a refusal is decided on a fresh read).
    expect((await first.patch(`/v1/apps/${app.id}`, { quotas: { maxStreams: 2 } })).status).toBe(200);
    expect((await onB.post(`/v1/apps/${app.id}/streams`, { name: 'three' })).status).toBe(201);
  });

  it('a stream created on replica A can be joined at once with a token minted on replica B', async () => {
    const { app, key } = await createTenant(first, 'joined across replicas');
    const stream: StreamView = await createStream(first.withKey(key.key), app.id);
    const token = await second
      .withKey(key.key)
      .post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'early', role: 'publisher' });
    expect(token.status).toBe(201);

    const room = new Room();
    try {
      await room.connect(token.body.url, token.body.token, { autoSubscribe: false, dynacast: false });
      expect(room.name).toBe(stream.room);
    } finally {
      await room.disconnect();
    }
  });

  it('a stream ended on replica A gets no more tokens from replica B, which had it cached', async () => {
    const { app, key } = await createTenant(first, 'ended on a');
    const stream: StreamView = await createStream(first.withKey(key.key), app.id);
    const onB = second.withKey(key.key);
    const mint = () =>
      onB.post<{ error?: { code: string } }>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'v', role: 'viewer' });
    expect((await mint()).status).toBe(201);
    expect((await mint()).status).toBe(201);

    expect((await first.withKey(key.key).delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBe(200);

    await waitFor('replica B refusing tokens for the ended stream', async () => ((await mint()).status === 409 ? true : undefined), 5_000);
    // And an app's stream is never another app's: the cache does not leak across apps.
    const other = await createTenant(first, 'other app');
    expect(
      (await second.withKey(other.key.key).post(`/v1/apps/${other.app.id}/streams/${stream.id}/tokens`, { identity: 'v', role: 'viewer' }))
        .status,
    ).toBe(404);
  });
});
