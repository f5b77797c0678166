import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenVerifier } from 'livekit-server-sdk';
import { CALL_TOKEN_REUSE_MS, RoomServiceWithReusedTokens } from './room.client.js';

const credentials = { url: 'http://127.0.0.1:1', apiKey: 'key', apiSecret: 'secret-0123456789abcdef0123456789abcdef' };
const bearer = async (header: Promise<Record<string, string>>) => (await header)['Authorization']!.replace('Bearer ', '');

describe(RoomServiceWithReusedTokens.name, () => {
  afterEach(() => vi.useRealTimers());

  it('reuses the token of a grant naming no room only while it is valid for longer than the reuse window', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), toFake: ['Date'] });
    const sut = new RoomServiceWithReusedTokens(credentials);
    const first = await bearer(sut.authHeader({ roomCreate: true }));
    const claims = await new TokenVerifier(credentials.apiKey, credentials.apiSecret).verify(first);
    // Reused for CALL_TOKEN_REUSE_MS, it must still be valid for at least as long again when last sent.
    expect((claims.exp ?? 0) * 1000 - Date.now()).toBeGreaterThanOrEqual(2 * CALL_TOKEN_REUSE_MS);
    expect(claims.video).toMatchObject({ roomCreate: true });

    vi.setSystemTime(Date.now() + CALL_TOKEN_REUSE_MS - 1);
    expect(await bearer(sut.authHeader({ roomCreate: true }))).toBe(first);
    vi.setSystemTime(Date.now() + 2);
    const renewed = await bearer(sut.authHeader({ roomCreate: true }));
    expect(renewed).not.toBe(first);
    await expect(new TokenVerifier(credentials.apiKey, credentials.apiSecret).verify(renewed)).resolves.toBeDefined();
  });

  it('keeps one token per grant, and signs grants for one room on every call', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), toFake: ['Date'] });
    const sut = new RoomServiceWithReusedTokens(credentials);
    const create = await bearer(sut.authHeader({ roomCreate: true }));
    const list = await bearer(sut.authHeader({ roomList: true }));
    expect(list).not.toBe(create);
    const verifier = new TokenVerifier(credentials.apiKey, credentials.apiSecret);
    expect((await verifier.verify(list)).video).toMatchObject({ roomList: true });

    const admin = await bearer(sut.authHeader({ roomAdmin: true, room: 'a' }));
    vi.setSystemTime(Date.now() + 1_000);
    expect(await bearer(sut.authHeader({ roomAdmin: true, room: 'a' }))).not.toBe(admin);
  });
});
