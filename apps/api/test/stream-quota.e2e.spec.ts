import type { AppView, LimitRefusal, StreamList, StreamView } from '@tally/contracts';
import type { ApiClient } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiReplicas, createTenant, startReplicas } from './api-harness.js';

describe('atomic stream quota across API processes', () => {
  let harness: ApiReplicas | undefined;
  let first: ApiClient;
  let second: ApiClient;

  beforeAll(async () => {
    // 1000 creates in a burst from one app: far above the default request rate, which is not what this tests.
    harness = await startReplicas(2, { env: { TALLY_RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000' } });
    [first, second] = harness.clients as [ApiClient, ApiClient];
  });
  afterAll(async () => {
    await harness?.stop();
  });

  it('admits exactly maxStreams of 1000 concurrent creates sent to two processes, and frees them on end', async () => {
    const { app, key } = await createTenant(first, 'race', { maxStreams: 10 });
    const clients = [first.withKey(key.key), second.withKey(key.key)];

    const responses = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        clients[i % 2]!.post<StreamView | LimitRefusal>(`/v1/apps/${app.id}/streams`, { name: `s${i}` }),
      ),
    );

    const created = responses.filter((r) => r.status === 201).map((r) => r.body as StreamView);
    const refused = responses.filter((r) => r.status === 429).map((r) => r.body as LimitRefusal);
    expect(created).toHaveLength(10);
    expect(refused).toHaveLength(990);
    expect(refused[0]!.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams', limit: 10, used: 10, requested: 1 });
    expect((await clients[1]!.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(10);
    expect((await clients[0]!.get<StreamList>(`/v1/apps/${app.id}/streams`)).body.items).toHaveLength(10);

    await Promise.all(created.map((s, i) => clients[i % 2]!.delete(`/v1/apps/${app.id}/streams/${s.id}`)));

    expect((await clients[0]!.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(0);
    const ended = await clients[1]!.get<StreamList>(`/v1/apps/${app.id}/streams?status=ended`);
    expect(ended.body.items).toHaveLength(10);
    expect((await clients[1]!.post(`/v1/apps/${app.id}/streams`, { name: 'after' })).status).toBe(201);
  });
});
