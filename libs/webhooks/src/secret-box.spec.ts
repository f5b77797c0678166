import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSecret, sealSecret, SecretBoxError } from './secret-box.js';

describe(sealSecret.name, () => {
  const key = randomBytes(32);
  const secret = 'whsec_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';

  it('round-trips, and never stores the plaintext', () => {
    const sut = sealSecret(key, secret, 'app_1');

    expect(sut).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sut).not.toContain(secret.slice(6, 20));
    expect(openSecret(key, sut, 'app_1')).toBe(secret);
  });

  it('uses a fresh IV each time', () => {
    expect(sealSecret(key, secret)).not.toBe(sealSecret(key, secret));
  });

  it('fails loudly under another key, another context, or after tampering', () => {
    const sealed = sealSecret(key, secret, 'app_1');
    const [v, iv, tag, ct] = sealed.split('.') as [string, string, string, string];
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] = flipped[0]! ^ 1;

    expect(() => openSecret(randomBytes(32), sealed, 'app_1')).toThrow(SecretBoxError);
    expect(() => openSecret(key, sealed, 'app_2')).toThrow(SecretBoxError);
    expect(() => openSecret(key, [v, iv, tag, flipped.toString('base64url')].join('.'), 'app_1')).toThrow(SecretBoxError);
    expect(() => openSecret(key, [v, iv, Buffer.alloc(16).toString('base64url'), ct].join('.'), 'app_1')).toThrow(SecretBoxError);
    expect(() => openSecret(key, 'whsec_plain', 'app_1')).toThrow(SecretBoxError);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => sealSecret(randomBytes(16), secret)).toThrow(/32 bytes/);
  });
});
