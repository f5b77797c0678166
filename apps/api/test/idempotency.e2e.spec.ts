import type { AppList, AppView, CreatedApiKey, CreatedCamera, StreamList, StreamView } from '@tally/contracts';
import type { ApiClient } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createTenant, startApiHarness } from './api-harness.js';

type ErrorBody = { error: { code: string; details?: { field?: string } } };

/** POST with an Idempotency-Key, as a client retrying after a timeout would. */
function postOnce<T>(client: ApiClient, path: string, key: string, body: unknown = {}) {
  return client.request<T>('POST', path, body, { 'idempotency-key': key });
}

describe('Idempotency-Key on creating POSTs', () => {
  let sut: ApiHarness;

  beforeAll(async () => {
    sut = await startApiHarness();
  });
  afterAll(async () => {
    await sut?.stop();
  });

  it('creates one stream for a retried request and answers the retry with the first response', async () => {
    const { app, client } = await createTenant(sut.admin, 'retrier');
    const path = `/v1/apps/${app.id}/streams`;

    const first = await postOnce<StreamView>(client, path, 'launch-1', { name: 'launch' });
    const retry = await postOnce<StreamView>(client, path, 'launch-1', { name: 'launch' });

    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect((await client.get<StreamList>(path)).body.items).toHaveLength(1);
    expect((await client.get<AppView>(`/v1/apps/${app.id}`)).body.usage.streams).toBe(1);
  });

  it('refuses the same key with a different body (409), and keeps keys per caller', async () => {
    const { app, client } = await createTenant(sut.admin, 'reuser');
    const other = await createTenant(sut.admin, 'neighbour');
    const path = `/v1/apps/${app.id}/streams`;
    await postOnce(client, path, 'k', { name: 'one' });

    const reused = await postOnce<ErrorBody>(client, path, 'k', { name: 'two' });
    const elsewhere = await postOnce<StreamView>(other.client, `/v1/apps/${other.app.id}/streams`, 'k', { name: 'one' });

    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({ code: 'conflict', details: { field: 'Idempotency-Key' } });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.appId).toBe(other.app.id);
    expect((await client.get<StreamList>(path)).body.items).toHaveLength(1);
  });

  it('keeps nothing for a refused request: the retry runs again once the quota has room', async () => {
    const { app, client } = await createTenant(sut.admin, 'tight', { maxStreams: 1 });
    const path = `/v1/apps/${app.id}/streams`;
    const holder = await postOnce<StreamView>(client, path, 'a', { name: 'first' });

    expect((await postOnce(client, path, 'b', { name: 'second' })).status).toBe(429);
    await client.delete(`${path}/${holder.body.id}`);
    const retried = await postOnce<StreamView>(client, path, 'b', { name: 'second' });

    expect(retried.status).toBe(201);
    expect(retried.body.name).toBe('second');
  });

  it('lets concurrent retries create exactly one stream', async () => {
    const { app, client } = await createTenant(sut.admin, 'stampede');
    const path = `/v1/apps/${app.id}/streams`;

    const answers = await Promise.all(Array.from({ length: 8 }, () => postOnce<StreamView>(client, path, 'burst', { name: 'burst' })));

    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect(new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id)).size).toBe(1);
    expect((await client.get<StreamList>(path)).body.items).toHaveLength(1);
  });

  it('replays apps, keys and cameras too, secrets included, and rejects a malformed key', async () => {
    const app = await postOnce<AppView>(sut.admin, '/v1/apps', 'new-app', { name: 'once' });
    expect((await postOnce<AppView>(sut.admin, '/v1/apps', 'new-app', { name: 'once' })).body.id).toBe(app.body.id);
    expect((await sut.admin.get<AppList>('/v1/apps')).body.items.filter((a) => a.name === 'once')).toHaveLength(1);

    const key = await postOnce<CreatedApiKey>(sut.admin, `/v1/apps/${app.body.id}/keys`, 'key-1');
    const keyAgain = await postOnce<CreatedApiKey>(sut.admin, `/v1/apps/${app.body.id}/keys`, 'key-1');
    expect(keyAgain.body).toEqual(key.body);
    const client = sut.admin.withKey(key.body.key);
    expect((await client.get(`/v1/apps/${app.body.id}`)).status).toBe(200);

    const camera = await postOnce<CreatedCamera>(client, `/v1/apps/${app.body.id}/cameras`, 'cam-1', { name: 'door' });
    const cameraAgain = await postOnce<CreatedCamera>(client, `/v1/apps/${app.body.id}/cameras`, 'cam-1', { name: 'door' });
    expect(camera.status).toBe(201);
    expect(cameraAgain.body).toEqual(camera.body);

    const bad = await postOnce<ErrorBody>(client, `/v1/apps/${app.body.id}/streams`, 'x'.repeat(256), { name: 'n' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details?.field).toBe('Idempotency-Key');
  });
});
