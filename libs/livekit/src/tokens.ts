import { HmacSha256 } from './hmac-sha256.js';
import type { JoinGrant, LivekitCredentials } from './livekit.types.js';

/** What LiveKit reads from a join token (livekit-server-sdk's `ClaimGrants` as JWT claims). */
export type JoinClaims = Readonly<{
  video: Readonly<{
    room: string;
    roomJoin: true;
    roomCreate: false;
    roomAdmin: false;
    roomList: false;
    canSubscribe: true;
    canPublish: boolean;
    canPublishData: boolean;
    canUpdateOwnMetadata: false;
  }>;
  name?: string;
  iss: string;
  exp: number;
  nbf: number;
  sub: string;
}>;

/** The JOSE header livekit-server-sdk writes (`{"alg":"HS256"}`), encoded once. */
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');

/**
 * Signs LiveKit join tokens: a compact JWS (RFC 7515) with HS256 over the API secret, carrying
 * the claims livekit-server-sdk's `AccessToken` writes (grant, name, issuer = API key, subject =
 * identity, not-before now, expiry). Written on node:crypto directly and synchronous: token minting
 * is on the path of every viewer joining; the SDK's async signer (jose) cost ~10× and fast-jwt ~2×
 * this per token, measured, and the HMAC reuses its key's pads (HmacSha256). tokens.spec.ts checks
 * the result against the SDK's own verifier.
 */
export class JoinTokenSigner {
  private readonly mac: HmacSha256;
  private readonly issuer: string;

  constructor(credentials: Pick<LivekitCredentials, 'apiKey' | 'apiSecret'>) {
    this.mac = new HmacSha256(Buffer.from(credentials.apiSecret, 'utf8'));
    this.issuer = JSON.stringify(credentials.apiKey);
  }

  sign(grant: JoinGrant, nowMs: number = Date.now()): string {
    const input = `${HEADER}.${Buffer.from(this.claimsJson(grant, nowMs)).toString('base64url')}`;
    return `${input}.${this.mac.base64url(input)}`;
  }

  /**
   * The JoinClaims as JSON, in the order livekit-server-sdk writes them. Written as text: serialising
   * a claims object cost a mint about as much as its signature; each value a client chose goes
   * through JSON.stringify.
   */
  private claimsJson(grant: JoinGrant, nowMs: number): string {
    const now = Math.floor(nowMs / 1000);
    const publish = grant.canPublish ? 'true' : 'false';
    const name = grant.name === undefined ? '' : `"name":${JSON.stringify(grant.name)},`;
    return (
      `{"video":{"room":${JSON.stringify(grant.room)},"roomJoin":true,"roomCreate":false,"roomAdmin":false,"roomList":false,` +
      `"canSubscribe":true,"canPublish":${publish},"canPublishData":${publish},"canUpdateOwnMetadata":false},` +
      `${name}"iss":${this.issuer},"exp":${now + grant.ttlSeconds},"nbf":${now},"sub":${JSON.stringify(grant.identity)}}`
    );
  }
}
