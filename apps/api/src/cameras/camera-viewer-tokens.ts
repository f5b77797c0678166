import { createHmac, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';

type Claims = Readonly<{ appId: string; cameraId: string; exp: number }>;

const PREFIX = 'cvt1.';

/**
 * Viewer tokens for one camera: `cvt1.<claims>.<HMAC-SHA256>`, stateless so any API replica checks
 * them. The signing key is derived from the LiveKit API secret, which every replica already shares.
 */
@Injectable()
export class CameraViewerTokens {
  private readonly key: Buffer;

  constructor(@Inject(CONFIG) config: Config) {
    this.key = createHmac('sha256', config.livekit.apiSecret).update('tally camera viewer token').digest();
  }

  mint(appId: string, cameraId: string, expiresAt: Date): string {
    const claims = Buffer.from(JSON.stringify({ appId, cameraId, exp: Math.floor(expiresAt.getTime() / 1000) })).toString('base64url');
    return `${PREFIX}${claims}.${this.sign(claims)}`;
  }

  /** True when the token was minted for this camera and has not expired. */
  allows(token: string, appId: string, cameraId: string, now: Date): boolean {
    if (!token.startsWith(PREFIX)) return false;
    const [claims, signature] = token.slice(PREFIX.length).split('.');
    if (!claims || !signature) return false;
    const expected = Buffer.from(this.sign(claims));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    let parsed: Claims;
    try {
      parsed = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as Claims;
    } catch {
      return false;
    }
    return parsed.appId === appId && parsed.cameraId === cameraId && parsed.exp * 1000 > now.getTime();
  }

  private sign(claims: string): string {
    return createHmac('sha256', this.key).update(claims).digest('base64url');
  }
}
