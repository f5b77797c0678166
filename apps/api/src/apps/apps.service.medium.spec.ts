import { Admitter } from '@tally/admission';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MediumApi, startMediumApi } from '../../test/medium/medium-harness.js';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { StreamsService } from '../streams/streams.service.js';
import { AppsService } from './apps.service.js';

describe(AppsService.name, () => {
  let api: MediumApi;
  let sut: AppsService;
  const admin = { kind: 'admin' } as const;

  beforeAll(async () => {
    api = await startMediumApi();
    sut = api.get(AppsService);
  });
  afterAll(() => api?.stop());

  it('keeps an operator’s limit, and returns it to the derived share when cleared', async () => {
    const app = await sut.create({ name: 'limits' });
    const derived = app.quotas.maxStreams;

    const limited = await sut.update(app.id, { quotas: { maxStreams: 3 } }, admin);
    const cleared = await sut.update(app.id, { quotas: { maxStreams: null } }, admin);

    expect(limited.quotas.maxStreams).toBe(3);
    expect(limited.explicitQuotas.maxStreams).toBe(3);
    expect((await sut.get(app.id)).quotas.maxStreams).toBe(derived);
    expect(cleared.explicitQuotas.maxStreams).toBeUndefined();
    expect(derived).toBeGreaterThan(0);
  });

  it('lets an app’s own key change its webhook URL but not its quotas', async () => {
    const app = await sut.create({ name: 'self-service' });
    const own = { kind: 'app', appId: app.id, keyId: 'key_0123456789abcdef' } as const;

    const updated = await sut.update(app.id, { webhookUrl: 'https://example.com/hook' }, own);
    const refused = await sut.update(app.id, { quotas: { maxStreams: 100 } }, own).catch((e: unknown) => e);

    expect(updated.webhookUrl).toBe('https://example.com/hook');
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'forbidden' });
    expect((await sut.get(app.id)).explicitQuotas.maxStreams).toBeUndefined();
  });

  it('puts the operator’s rate limits in the app’s policy copy every API replica reads; the app’s own key may not set them', async () => {
    const app = await sut.create({ name: 'rates' });
    const own = { kind: 'app', appId: app.id, keyId: 'key_0123456789abcdef' } as const;

    const refused = await sut.update(app.id, { rateLimits: { requestsPerMinute: 1_000_000 } }, own).catch((e: unknown) => e);
    const updated = await sut.update(app.id, { rateLimits: { startsPerMinute: 12 } }, admin);

    expect(refused).toMatchObject({ code: 'forbidden' });
    expect(app.rateLimits.explicit).toEqual({});
    expect(updated.rateLimits).toMatchObject({ startsPerMinute: 12, explicit: { startsPerMinute: 12 } });
    expect(updated.rateLimits.requestsPerMinute).toBe(app.rateLimits.requestsPerMinute);
    expect((await api.get(Admitter).policyOf(app.id)).rateLimits).toEqual({ startsPerMinute: 12 });
  });

  it('ends the app’s streams in LiveKit when the app is deleted, then no longer finds it', async () => {
    const app = await sut.create({ name: 'leaving' });
    const streams = api.get(StreamsService);
    const stream = await streams.create(app.id, { name: 'last show' });
    // Its first token would create the room (StreamRooms).
    await streams.roomReady(stream.room);
    expect(api.livekit.rooms.has(stream.room)).toBe(true);

    await sut.delete(app.id);

    expect(api.livekit.rooms.has(stream.room)).toBe(false);
    await expect(sut.get(app.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
