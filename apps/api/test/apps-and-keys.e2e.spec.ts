import type { ApiKeyList, AppList, AppView, CreatedApiKey, ErrorBody } from '@tally/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createTenant, startApiHarness } from './api-harness.js';

describe('apps and keys', () => {
  let sut: ApiHarness;

  beforeAll(async () => {
    sut = await startApiHarness();
  });
  afterAll(async () => {
    await sut?.stop();
  });

  it('creates an app whose quotas are its share of the node pool, and lists it', async () => {
    const created = await sut.admin.post<AppView>('/v1/apps', { name: 'Acme Live' });

    expect(created.status).toBe(201);
    // The stack's node is the 8 vCPU / 8 GB origin: a shared app's defaults are ≈10 streams, 2 Chrome recordings.
    expect(created.body).toMatchObject({
      name: 'Acme Live',
      quotas: { maxStreams: 10, maxRoomComposites: 2 },
      explicitQuotas: {},
      usage: { streams: 0 },
    });
    expect(created.body.id).toMatch(/^app_/);
    const list = await sut.admin.get<AppList>('/v1/apps');
    expect(list.body.items.map((a) => a.id)).toContain(created.body.id);
  });

  it('sets, reads back and resets a quota', async () => {
    const { app } = await createTenant(sut.admin, 'quota app');
    const derived = (await sut.admin.get<AppView>(`/v1/apps/${app.id}`)).body.quotas.maxStreams;

    const patched = await sut.admin.patch<AppView>(`/v1/apps/${app.id}`, { quotas: { maxStreams: 3 } });
    expect(patched.body.quotas.maxStreams).toBe(3);
    expect(patched.body.explicitQuotas).toEqual({ maxStreams: 3 });
    expect((await sut.admin.get<AppView>(`/v1/apps/${app.id}`)).body.quotas.maxStreams).toBe(3);

    const reset = await sut.admin.patch<AppView>(`/v1/apps/${app.id}`, { quotas: { maxStreams: null } });
    expect(reset.body.quotas.maxStreams).toBe(derived);
    expect(reset.body.explicitQuotas).toEqual({});
  });

  it('shows a key once, stores only its hash and lists it without the secret', async () => {
    const { app, key } = await createTenant(sut.admin, 'keys app');

    expect(key.key).toMatch(/^tk_/);
    const list = await sut.admin.get<ApiKeyList>(`/v1/apps/${app.id}/keys`);
    expect(list.body.items).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(key.key);
    expect(list.body.items[0]).toMatchObject({ id: key.id, prefix: key.key.slice(0, 9) });
  });

  it('lets an app key read its own app but not manage apps or keys', async () => {
    const { app, client } = await createTenant(sut.admin, 'scoped app');

    expect((await client.get<AppView>(`/v1/apps/${app.id}`)).status).toBe(200);
    expect((await client.get('/v1/apps')).status).toBe(403);
    expect((await client.post(`/v1/apps/${app.id}/keys`)).status).toBe(403);
  });

  it('answers 404 when a key touches another app', async () => {
    const first = await createTenant(sut.admin, 'first');
    const second = await createTenant(sut.admin, 'second');

    const response = await first.client.get<ErrorBody>(`/v1/apps/${second.app.id}`);
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
    expect((await first.client.get(`/v1/apps/${second.app.id}/streams`)).status).toBe(404);
  });

  it('refuses a revoked key at once', async () => {
    const { app, client, key } = await createTenant(sut.admin, 'revoked');
    expect((await client.get(`/v1/apps/${app.id}`)).status).toBe(200);

    expect((await sut.admin.delete(`/v1/apps/${app.id}/keys/${key.id}`)).status).toBe(204);

    const refused = await client.get<ErrorBody>(`/v1/apps/${app.id}`);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    expect((await sut.admin.get<ApiKeyList>(`/v1/apps/${app.id}/keys`)).body.items).toHaveLength(0);
  });

  it('refuses requests without a key or with an unknown one', async () => {
    expect((await sut.anonymous.get('/v1/apps')).status).toBe(401);
    expect((await sut.anonymous.withKey('tk_not-a-real-key').get('/v1/apps')).status).toBe(401);
  });

  it('names the invalid field in a 400', async () => {
    const missing = await sut.admin.post<ErrorBody>('/v1/apps', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'name' }] } });

    const wrongType = await sut.admin.post<ErrorBody>('/v1/apps', { name: 'x', extra: true });
    expect(wrongType.status).toBe(400);

    const badQuota = await sut.admin.patch<ErrorBody>(`/v1/apps/${(await createTenant(sut.admin, 'q')).app.id}`, {
      quotas: { maxStreams: -1 },
    });
    expect(badQuota.status).toBe(400);
    expect(badQuota.body.error.details).toMatchObject({ fields: [{ field: 'quotas.maxStreams' }] });

    // A NUL (which PostgreSQL refuses in text) or any other control character never reaches the database.
    const nul = await sut.admin.post<ErrorBody>('/v1/apps', { name: 'a\u0000b' });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'name' }] } });
    const tenant = await createTenant(sut.admin, 'cameras');
    const camera = await tenant.client.post<ErrorBody>(`/v1/apps/${tenant.app.id}/cameras`, { name: '\u0000' });
    expect(camera.status).toBe(400);
    expect(camera.body.error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'name' }] } });

    const malformed = await sut.admin.request<ErrorBody>('POST', '/v1/apps', '{"name":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.requestId).toBeTruthy();
  });

  it('answers 404 for unknown ids and deletes an app with its keys', async () => {
    const { app, client } = await createTenant(sut.admin, 'doomed');
    expect((await sut.admin.get('/v1/apps/app_0000000000000000')).status).toBe(404);

    expect((await sut.admin.delete(`/v1/apps/${app.id}`)).status).toBe(204);

    expect((await sut.admin.get(`/v1/apps/${app.id}`)).status).toBe(404);
    expect((await client.get(`/v1/apps/${app.id}`)).status).toBe(401);
  });

  it('creates keys that are distinct and independently revocable', async () => {
    const { app } = await createTenant(sut.admin, 'two keys');
    const second = await sut.admin.post<CreatedApiKey>(`/v1/apps/${app.id}/keys`);
    const keys = await sut.admin.get<ApiKeyList>(`/v1/apps/${app.id}/keys`);
    expect(keys.body.items).toHaveLength(2);
    expect(new Set(keys.body.items.map((k) => k.id)).size).toBe(2);
    expect(second.body.key).not.toBe('');
  });
});
