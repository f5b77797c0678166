import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PREFIX = 'tk_';

/** A new app key: shown once, stored only as its hash. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The SHA-256 of a presented secret as bytes: compared in constant time, or hex-encoded for lookups. */
export function keyDigest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/** What lists show: enough to tell keys apart, useless to an attacker. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(keyDigest(a), keyDigest(b));
}
