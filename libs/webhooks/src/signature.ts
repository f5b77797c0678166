import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks (https://www.standardwebhooks.com): every delivery carries these three headers,
 * so an app verifies it with the published library of its language.
 */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + 32 random bytes in standard base64, as the Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a secret: the base64 after `whsec_` (Node's decoder also takes the URL-safe alphabet). */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('a webhook secret must not be empty');
  return key;
}

/**
 * The `webhook-signature` value: `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` per
 * secret, space-separated. During a rotation both secrets sign, so a receiver holding either
 * verifies; the id and timestamp are signed with the body, so neither can be swapped on a replay.
 */
export function signatureHeader(keys: readonly Buffer[], messageId: string, timestampS: number, body: string): string {
  const signed = `${messageId}.${Math.floor(timestampS)}.${body}`;
  return keys.map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' ');
}
