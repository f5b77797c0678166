import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that does not open: tampered, truncated, or sealed under another key or context. */
export class SecretBoxError extends Error {}

/**
 * Seals `plaintext` with AES-256-GCM under a 32-byte key: `v1.<iv>.<tag>.<ciphertext>` (base64url).
 * `context` (an app id, say) is authenticated but not stored, so a sealed value copied onto another
 * row does not open there.
 */
export function sealSecret(key: Buffer, plaintext: string, context = ''): string {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** Opens what `sealSecret` sealed with the same key and context; throws `SecretBoxError` otherwise. */
export function openSecret(key: Buffer, sealed: string, context = ''): string {
  assertKey(key);
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretBoxError('not a sealed secret');
  const [iv, tag, ciphertext] = parts.slice(1).map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer];
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('not a sealed secret');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('sealed secret does not open: wrong key, or the value was altered');
  }
}

function assertKey(key: Buffer): void {
  if (key.length !== 32) throw new SecretBoxError(`the secrets key must be 32 bytes, got ${key.length}`);
}
