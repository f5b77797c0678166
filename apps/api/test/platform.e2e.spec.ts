import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorBody, Health } from '@tally/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from './api-harness.js';

describe('health, OpenAPI and the LiveKit webhook receiver', () => {
  let sut: ApiHarness;

  beforeAll(async () => {
    sut = await startApiHarness();
  });
  afterAll(async () => {
    await sut?.stop();
  });

  it('reports Postgres, Redis and LiveKit healthy', async () => {
    const health = await sut.anonymous.get<Health>('/healthz');

    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');
    expect(health.body.checks.postgres.ok && health.body.checks.redis.ok && health.body.checks.livekit.ok).toBe(true);
  });

  it('serves the OpenAPI document that docs/openapi.json holds', async () => {
    const served = await sut.anonymous.get<{ openapi: string; paths: Record<string, unknown> }>('/openapi.json');

    expect(served.status).toBe(200);
    expect(served.body.openapi).toBe('3.1.0');
    expect(Object.keys(served.body.paths)).toContain('/v1/apps/{appId}/streams/{streamId}/tokens');
    const committed: unknown = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'openapi.json'), 'utf8'));
    expect(served.body, 'docs/openapi.json is stale: run npm run openapi').toEqual(committed);
  });

  it('refuses unsigned and tampered webhooks with 401', async () => {
    const body = JSON.stringify({ event: 'room_finished', id: 'EV_x', room: { name: 'app_x.str_y' } });
    const unsigned = await sut.anonymous.request<ErrorBody>('POST', '/webhooks/livekit', body, {
      'content-type': 'application/webhook+json',
    });
    expect(unsigned.status).toBe(401);

    const forged = await sut.anonymous.request<ErrorBody>('POST', '/webhooks/livekit', body, {
      'content-type': 'application/webhook+json',
      authorization: 'eyJhbGciOiJIUzI1NiJ9.eyJzaGEyNTYiOiJ4In0.invalid',
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('unauthorized');
  });

  it('puts a request id on every response', async () => {
    const response = await sut.anonymous.get<ErrorBody>('/v1/apps');
    expect(response.headers.get('x-request-id')).toBe(response.body.requestId);
  });
});
