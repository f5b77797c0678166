import { AccessToken, TokenVerifier } from 'livekit-server-sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type JoinClaims, JoinTokenSigner } from './tokens.js';

const credentials = { apiKey: 'APIbench', apiSecret: 'a-secret-of-at-least-thirty-two-characters' };
const grant = { room: 'room_1', identity: 'viewer-7', name: 'Viewer', canPublish: false, ttlSeconds: 600 };

/** The token livekit-server-sdk writes for the same grant: the reference for the claims. */
async function sdkToken(g: typeof grant): Promise<string> {
  const token = new AccessToken(credentials.apiKey, credentials.apiSecret, { identity: g.identity, ttl: g.ttlSeconds, name: g.name });
  token.addGrant({
    room: g.room,
    roomJoin: true,
    roomCreate: false,
    roomAdmin: false,
    roomList: false,
    canSubscribe: true,
    canPublish: g.canPublish,
    canPublishData: g.canPublish,
    canUpdateOwnMetadata: false,
  });
  return token.toJwt();
}

describe(JoinTokenSigner.name, () => {
  afterEach(() => vi.useRealTimers());

  it('writes the claims livekit-server-sdk writes, and LiveKit’s verifier accepts its signature', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-24T18:00:00.400Z'), toFake: ['Date'] });
    const signer = new JoinTokenSigner(credentials);
    for (const g of [grant, { ...grant, canPublish: true }]) {
      const ours = await new TokenVerifier(credentials.apiKey, credentials.apiSecret).verify(signer.sign(g), 0);
      const theirs = await new TokenVerifier(credentials.apiKey, credentials.apiSecret).verify(await sdkToken(g), 0);
      expect(ours).toEqual(theirs);
      expect(ours).toMatchObject({ sub: g.identity, iss: credentials.apiKey, exp: Date.parse('2026-11-24T18:10:00Z') / 1000 });
    }
  });

  it('leaves the name out when none is given', async () => {
    const token = new JoinTokenSigner(credentials).sign({ ...grant, name: undefined });
    const claims = await new TokenVerifier(credentials.apiKey, credentials.apiSecret).verify(token);
    expect(claims).not.toHaveProperty('name');
    expect(claims.video).toMatchObject({ room: 'room_1', roomJoin: true, canPublish: false });
  });

  it("carries any identity and name a client chose, quotes, backslashes and emoji included, in the SDK's claim order", async () => {
    vi.useFakeTimers({ now: new Date('2026-11-24T18:00:00Z'), toFake: ['Date'] });
    const odd = { ...grant, identity: 'a "quoted" \\ viewer 😀', name: 'Zoë "Z" </script>' };
    const token = new JoinTokenSigner(credentials).sign(odd);
    const claims = await new TokenVerifier(credentials.apiKey, credentials.apiSecret).verify(token, 0);
    expect(claims).toMatchObject({ sub: odd.identity, name: odd.name });
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as JoinClaims;
    const now = Date.parse('2026-11-24T18:00:00Z') / 1000;
    expect(Object.keys(payload)).toEqual(['video', 'name', 'iss', 'exp', 'nbf', 'sub']);
    expect(payload).toEqual({
      video: {
        room: 'room_1',
        roomJoin: true,
        roomCreate: false,
        roomAdmin: false,
        roomList: false,
        canSubscribe: true,
        canPublish: false,
        canPublishData: false,
        canUpdateOwnMetadata: false,
      },
      name: odd.name,
      iss: credentials.apiKey,
      exp: now + 600,
      nbf: now,
      sub: odd.identity,
    } satisfies JoinClaims);
  });

  it('is refused by a verifier holding another secret', async () => {
    const token = new JoinTokenSigner({ ...credentials, apiSecret: 'another-secret-of-at-least-thirty-two-chars' }).sign(grant);
    await expect(new TokenVerifier(credentials.apiKey, credentials.apiSecret).verify(token)).rejects.toThrow();
  });
});
