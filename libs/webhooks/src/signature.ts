import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The header every delivery carries: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export const SIGNATURE_HEADER = 'Tally-Signature';

/** How far a signature's timestamp may be from the receiver's clock before it is refused as a replay. */
export const DEFAULT_TOLERANCE_S = 300;

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, `whsec_` + base64url. Shown to the app once. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * The `Tally-Signature` value for `body` sent at `timestampS`. The timestamp is signed with the
 * body, so a captured request cannot be replayed later with a fresh timestamp.
 */
export function sign(secret: string, timestampS: number, body: string): string {
  const t = Math.floor(timestampS);
  return `t=${t},v1=${hmac(secret, t, body)}`;
}

/**
 * Whether `header` is a valid signature of `body` under `secret`, made within `toleranceS` of
 * `nowS`. Accepts several `v1=` entries (any one matching is enough); compares in constant time.
 */
export function verifySignature(secret: string, header: string, body: string, nowS: number, toleranceS = DEFAULT_TOLERANCE_S): boolean {
  const parsed = parseSignatureHeader(header);
  if (!parsed) return false;
  if (Math.abs(nowS - parsed.t) > toleranceS) return false;
  const expected = Buffer.from(hmac(secret, parsed.t, body), 'hex');
  let match = false;
  for (const candidate of parsed.v1) {
    const presented = Buffer.from(candidate, 'hex');
    // Every candidate is compared, so timing does not tell which (if any) matched.
    if (presented.length === expected.length && timingSafeEqual(presented, expected)) match = true;
  }
  return match;
}

export function parseSignatureHeader(header: string): { t: number; v1: string[] } | undefined {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) v1.push(value);
  }
  return t === undefined || v1.length === 0 ? undefined : { t, v1 };
}

function hmac(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}
