import type { CapacityCheckResult, StreamList, StreamToken, StreamView } from '@tally/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

type ErrorAnswer = Readonly<{
  error: { code: string; message: string; details?: { fields?: { field: string }[] }; resource?: string; limit?: number; used?: number };
  requestId: string;
}>;

/** Stream create, token minting and capacity/check are served by Fastify without Nest's router (@DirectRoute): they must answer as every other route does. */
describe('routes served without Nest', () => {
  let harness: ApiHarness | undefined;

  beforeAll(async () => {
    harness = await startApiHarness();
  });
  afterAll(async () => {
    await harness?.stop();
  });

  it('mint a token and check capacity with the request id and rate-limit headers of any keyed route', async () => {
    const { admin } = harness!;
    const { app, client } = await createTenant(admin, 'direct routes');
    const stream = await createStream(client, app.id);

    const token = await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, {
      identity: 'viewer-1',
      role: 'viewer',
    });
    const check = await client.post<CapacityCheckResult>(`/v1/apps/${app.id}/capacity/check`, { kind: 'stream' });

    expect(token.status).toBe(201);
    expect(token.body.token.split('.')).toHaveLength(3);
    expect(check.status).toBe(200);
    expect(check.body).toMatchObject({ admitted: true });
    for (const answer of [token, check]) {
      expect(answer.headers.get('x-request-id')).toMatch(/\S/);
      expect(answer.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    }
  });

  it('answer 400 naming the field, 404 for another app or stream, 401 without a valid key', async () => {
    const { admin, anonymous } = harness!;
    const { app, client } = await createTenant(admin, 'direct errors');
    const other = await createTenant(admin, 'direct other');
    const stream = await createStream(client, app.id);
    const tokens = `/v1/apps/${app.id}/streams/${stream.id}/tokens`;

    const badBody = await client.post<ErrorAnswer>(tokens, { identity: 'has space', role: 'viewer' });
    const badCheck = await client.post<ErrorAnswer>(`/v1/apps/${app.id}/capacity/check`, { kind: 'stream', count: 0 });
    const badParams = await client.post<ErrorAnswer>(`/v1/apps/${app.id}/streams/not-an-id/tokens`, { identity: 'v', role: 'viewer' });
    const otherApp = await other.client.post<ErrorAnswer>(tokens, { identity: 'v', role: 'viewer' });
    const otherCheck = await other.client.post<ErrorAnswer>(`/v1/apps/${app.id}/capacity/check`, { kind: 'stream' });
    const otherStream = await other.client.post<ErrorAnswer>(`/v1/apps/${other.app.id}/streams/${stream.id}/tokens`, {
      identity: 'v',
      role: 'viewer',
    });
    const noKey = await anonymous.post<ErrorAnswer>(tokens, { identity: 'v', role: 'viewer' });
    const badKey = await anonymous.withKey('tally_not_a_key').post<ErrorAnswer>(`/v1/apps/${app.id}/capacity/check`, { kind: 'stream' });

    expect(badBody.status).toBe(400);
    expect(badBody.body.error.details?.fields?.map((f) => f.field)).toEqual(['identity']);
    expect(badCheck.status).toBe(400);
    expect(badCheck.body.error.details?.fields?.map((f) => f.field)).toEqual(['count']);
    expect(badParams.status).toBe(400);
    expect(badParams.body.error.details?.fields?.map((f) => f.field)).toEqual(['streamId']);
    for (const answer of [otherApp, otherCheck, otherStream]) expect([answer.status, answer.body.error.code]).toEqual([404, 'not_found']);
    for (const answer of [noKey, badKey]) expect([answer.status, answer.body.error.code]).toEqual([401, 'unauthorized']);
    for (const answer of [badBody, otherApp, noKey]) expect(answer.body.requestId).toBe(answer.headers.get('x-request-id'));
  });

  it('refuse a minting key at once when it is revoked', async () => {
    const { admin } = harness!;
    const { app, client, key } = await createTenant(admin, 'direct revoked');
    const stream = await createStream(client, app.id);
    const mint = () => client.post<ErrorAnswer>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'v', role: 'viewer' });
    expect([(await mint()).status, (await mint()).status]).toEqual([201, 201]);

    expect((await admin.delete(`/v1/apps/${app.id}/keys/${key.id}`)).status).toBe(204);

    const refused = await mint();
    expect([refused.status, refused.body.error.code]).toEqual([401, 'unauthorized']);
  });

  it('read JSON and form bodies: malformed JSON is a 400, a form body is validated like JSON', async () => {
    const { admin, stack } = harness!;
    const { app, client, key } = await createTenant(admin, 'direct bodies');
    const stream = await createStream(client, app.id);
    const post = (contentType: string, body: string) =>
      fetch(`http://127.0.0.1:${stack.config.http.port}/v1/apps/${app.id}/streams/${stream.id}/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': contentType },
        body,
      });

    const malformed = await post('application/json', '{"identity":');
    const empty = await post('application/json', '');
    const form = await post('application/x-www-form-urlencoded', 'identity=viewer-2&role=viewer');

    for (const answer of [malformed, empty]) {
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as ErrorAnswer).error.code).toBe('validation_failed');
    }
    expect(form.status).toBe(201);
    expect(((await form.json()) as StreamToken).identity).toBe('viewer-2');
  });

  it('create a stream with the headers of any keyed route, refusing a bad name, another app and the cap as Nest would', async () => {
    const { admin } = harness!;
    const { app, client } = await createTenant(admin, 'direct create', { maxStreams: 1 });
    const other = await createTenant(admin, 'direct create other');
    const streams = `/v1/apps/${app.id}/streams`;

    const badName = await client.post<ErrorAnswer>(streams, { name: 'nul\u0000inside' });
    const otherApp = await other.client.post<ErrorAnswer>(streams, { name: 'theirs' });
    const created = await client.post<StreamView>(streams, { name: 'direct' });
    const overCap = await client.post<ErrorAnswer>(streams, { name: 'one too many' });

    expect(badName.status).toBe(400);
    expect(badName.body.error.details?.fields?.map((f) => f.field)).toEqual(['name']);
    expect([otherApp.status, otherApp.body.error.code]).toEqual([404, 'not_found']);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ appId: app.id, name: 'direct', status: 'created' });
    expect(created.headers.get('x-request-id')).toMatch(/\S/);
    expect(created.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(overCap.status).toBe(429);
    expect(overCap.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams', limit: 1, used: 1 });
    expect((await client.get<StreamList>(streams)).body.items.map((s) => s.id)).toEqual([created.body.id]);
  });

  it('create a stream through Nest when the request carries an Idempotency-Key, so its retry is answered from the first', async () => {
    const { admin } = harness!;
    const { app, client } = await createTenant(admin, 'direct idempotent');
    const streams = `/v1/apps/${app.id}/streams`;

    const first = await client.request<StreamView>('POST', streams, { name: 'once' }, { 'idempotency-key': 'direct-1' });
    const retry = await client.request<StreamView>('POST', streams, { name: 'once' }, { 'idempotency-key': 'direct-1' });

    expect(first.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await client.get<StreamList>(streams)).body.items).toHaveLength(1);
  });
});
