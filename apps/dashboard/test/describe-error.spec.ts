import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../src/api/client.js';
import { describeError, fieldError } from '../src/api/errors.js';
import type { ApiErrorBody } from '../src/api/client.js';

const apiError = (status: number, error: ApiErrorBody['error'], path = '/v1/apps/app_x/streams'): ApiError =>
  new ApiError(status, { error, requestId: 'req-1' }, 'POST', path);

describe(describeError.name, () => {
  it('names the quota that refused and how full it is', () => {
    const sut = apiError(429, {
      code: 'quota_exceeded',
      message: 'app.recordings quota reached: 1 of 1 in use',
      resource: 'app.recordings',
      limit: 1,
      used: 1,
      requested: 1,
    });

    expect(describeError(sut, 'Recording')).toBe(
      'Recording refused: app.recordings is at its limit (1 of 1 in use). End something that uses it, or ask the operator to raise the limit.',
    );
  });

  it('tells an app at its storage cap how much it holds, in MB, and how to free it', () => {
    const sut = apiError(429, {
      code: 'quota_exceeded',
      message: 'app.storage quota reached: 3 of 2 in use',
      resource: 'app.storage',
      limit: 2,
      used: 3,
      requested: 0,
    });

    expect(describeError(sut, 'Recording')).toBe(
      "Recording refused: the app's recordings fill its storage cap (3 MB of 2 MB held). Delete recordings, or ask the operator to raise the cap.",
    );
  });

  it('names the node resource that ran out, with units and when to retry', () => {
    const sut = apiError(429, {
      code: 'capacity_exhausted',
      message: 'node.ram exhausted',
      resource: 'node.ram',
      limit: 6500,
      used: 6000,
      requested: 1274,
      retryAfterS: 30,
      nodeId: 'origin-1',
    });

    expect(describeError(sut, 'Recording')).toBe(
      'Recording refused: the servers are out of node.ram on origin-1 (6000 MB of 6500 MB in use, 1274 MB more needed). Retry in 30 s.',
    );
  });

  it('names a full disk in MB', () => {
    const sut = apiError(429, {
      code: 'capacity_exhausted',
      message: 'node.disk exhausted',
      resource: 'node.disk',
      limit: 58,
      used: 0,
      requested: 215,
      retryAfterS: 30,
      nodeId: 'origin-1',
    });

    expect(describeError(sut, 'Recording')).toBe(
      'Recording refused: the servers are out of node.disk on origin-1 (0 MB of 58 MB in use, 215 MB more needed). Retry in 30 s.',
    );
  });

  it('says when no node takes work at all', () => {
    const sut = apiError(429, { code: 'capacity_exhausted', message: 'x', resource: 'node.unavailable', limit: 0, used: 0, requested: 1 });

    expect(describeError(sut, 'Stream')).toMatch(/^Stream refused: no node can take new work right now/);
  });

  it('names each rejected field of a 400', () => {
    const sut = apiError(400, {
      code: 'validation_failed',
      message: 'invalid request',
      details: {
        fields: [
          { field: 'name', message: 'Too small: expected string to have >=1 characters' },
          { field: 'mode', message: 'Invalid option' },
        ],
      },
    });

    expect(describeError(sut, 'Stream')).toBe(
      'Stream failed: name: Too small: expected string to have >=1 characters; mode: Invalid option',
    );
  });

  it('tells a missing route from a missing resource', () => {
    const route = apiError(404, { code: 'not_found', message: 'Cannot GET /v1/apps/app_x/ingresses' }, '/v1/apps/app_x/ingresses');
    const resource = apiError(404, { code: 'not_found', message: 'stream not found' });

    expect(route.routeMissing).toBe(true);
    expect(describeError(route, 'Loading ingresses')).toBe(
      'Loading ingresses is not available on this server (POST /v1/apps/app_x/ingresses does not exist).',
    );
    expect(resource.routeMissing).toBe(false);
    expect(describeError(resource, 'Loading the stream')).toBe('Loading the stream failed: stream not found.');
  });

  it('shows network failures instead of swallowing them', () => {
    const sut = new NetworkError('GET', '/v1/apps/app_x/streams', new TypeError('Failed to fetch'));

    expect(describeError(sut, 'Loading streams')).toBe(
      'Loading streams failed: the Tally API could not be reached (Failed to fetch). Check that the server is running.',
    );
  });

  it('asks to sign in again on a 401 and keeps the request id of a server error', () => {
    expect(describeError(apiError(401, { code: 'unauthorized', message: 'unknown or revoked key' }), 'Loading streams')).toBe(
      'Your key was not accepted (unknown or revoked): sign in again.',
    );
    expect(describeError(apiError(500, { code: 'internal', message: 'internal error' }), 'Stream')).toBe(
      'Stream failed (HTTP 500): internal error (request req-1).',
    );
  });
});

describe(fieldError.name, () => {
  const invalid = apiError(400, {
    code: 'validation_failed',
    message: 'invalid request: rateLimits.startsPerMinute: Too small: expected number to be >=1',
    details: { fields: [{ field: 'rateLimits.startsPerMinute', message: 'Too small: expected number to be >=1' }] },
  });

  it("gives a 400's message for the field it names, and nothing for the others", () => {
    expect(fieldError(invalid, 'rateLimits.startsPerMinute')).toBe('Too small: expected number to be >=1');
    expect(fieldError(invalid, 'rateLimits.requestsPerMinute')).toBeUndefined();
  });

  it('gives nothing for a failure that is not a 400', () => {
    expect(
      fieldError(apiError(403, { code: 'forbidden', message: 'admin only', details: { fields: ['rateLimits'] } }), 'rateLimits'),
    ).toBeUndefined();
    expect(fieldError(new NetworkError('PATCH', '/v1/apps/app_x', new Error('refused')), 'rateLimits')).toBeUndefined();
  });
});
