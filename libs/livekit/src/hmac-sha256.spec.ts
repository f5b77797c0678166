import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacSha256 } from './hmac-sha256.js';

const reference = (key: Buffer, message: string): string => createHmac('sha256', key).update(message, 'utf8').digest('base64url');

describe(HmacSha256.name, () => {
  it('matches RFC 4231 test case 2', () => {
    const mac = new HmacSha256(Buffer.from('Jefe'));
    expect(Buffer.from(mac.base64url('what do ya want for nothing?'), 'base64url').toString('hex')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('matches node:crypto for keys shorter than, equal to and longer than a block, and messages around block edges', () => {
    for (const keyBytes of [1, 32, 63, 64, 65, 200]) {
      const key = Buffer.from(Array.from({ length: keyBytes }, (_, i) => (i * 37 + keyBytes) % 256));
      const mac = new HmacSha256(key);
      for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 383, 1000]) {
        const message = 'x'.repeat(length);
        expect(mac.base64url(message), `key ${keyBytes} B, message ${length} B`).toBe(reference(key, message));
      }
    }
  });

  it('signs messages longer than its buffer and non-ASCII text, and each call stands alone', () => {
    const key = Buffer.from('a-secret-of-at-least-thirty-two-characters');
    const mac = new HmacSha256(key, 16);
    const long = 'é€😀'.repeat(500);
    expect(mac.base64url(long)).toBe(reference(key, long));
    expect(mac.base64url('short')).toBe(reference(key, 'short'));
    expect(mac.base64url(long)).toBe(reference(key, long));
  });
});
