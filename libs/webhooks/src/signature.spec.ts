import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, parseSignatureHeader, sign, verifySignature } from './signature.js';

const secret = 'whsec_test-secret';
const body = '{"id":"evt_0123456789abcdef","type":"stream.live"}';
const t = 1_764_000_000;

describe(sign.name, () => {
  it('is HMAC-SHA256 of "<t>.<body>" in hex, as an app recomputes it', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

    expect(sign(secret, t, body)).toBe(`t=${t},v1=${expected}`);
  });

  it('matches a fixed vector, so the algorithm cannot drift unnoticed', () => {
    expect(sign('key', 1, 'x')).toBe('t=1,v1=fc4913c41a7bf793267e2a384f3261c9436ec2cd097bd745e7b0d99113f510ec');
    expect(sign('key', 1.9, 'x')).toBe(sign('key', 1, 'x'));
  });
});

describe(verifySignature.name, () => {
  const sut = verifySignature;
  const header = sign(secret, t, body);

  it('accepts the signature of the exact body within the tolerance', () => {
    expect(sut(secret, header, body, t)).toBe(true);
    expect(sut(secret, header, body, t + 299)).toBe(true);
    expect(sut(secret, header, body, t - 299)).toBe(true);
  });

  it('refuses a stale or future timestamp (a replay)', () => {
    expect(sut(secret, header, body, t + 301)).toBe(false);
    expect(sut(secret, header, body, t - 301)).toBe(false);
    expect(sut(secret, header, body, t + 30, 10)).toBe(false);
  });

  it('refuses another body, another secret, or a timestamp swapped in', () => {
    expect(sut(secret, header, `${body} `, t)).toBe(false);
    expect(sut('whsec_other', header, body, t)).toBe(false);
    expect(sut(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, t)).toBe(false);
  });

  it('refuses malformed headers without throwing', () => {
    for (const bad of ['', 'garbage', `t=${t}`, 'v1=abc', `t=x,v1=${'0'.repeat(64)}`, `t=${t},v1=zz`]) {
      expect(sut(secret, bad, body, t)).toBe(false);
    }
  });

  it('accepts any one of several v1 entries (a receiver mid-rotation)', () => {
    const other = sign('whsec_old', t, body).split(',')[1]!;

    expect(sut(secret, `t=${t},${other},${header.split(',')[1]!}`, body, t)).toBe(true);
  });
});

describe(parseSignatureHeader.name, () => {
  it('reads the timestamp and every v1 value, ignoring unknown schemes', () => {
    const v1 = 'a'.repeat(64);

    expect(parseSignatureHeader(`t=5, v1=${v1}, v0=old`)).toEqual({ t: 5, v1: [v1] });
  });
});

describe(newWebhookSecret.name, () => {
  it('is whsec_ + 32 random bytes in base64url', () => {
    const a = newWebhookSecret();

    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
