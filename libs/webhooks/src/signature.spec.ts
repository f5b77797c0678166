import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, secretKey, signatureHeader } from './signature.js';

const body = '{"id":"evt_0123456789abcdef","type":"stream.live"}';
const id = 'evt_0123456789abcdef';

/** Headers as a receiver gets them; verified only with the published `standardwebhooks` library. */
function headers(secrets: readonly string[], timestampS: number): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signatureHeader(secrets.map(secretKey), id, timestampS, body),
  };
}

describe(signatureHeader.name, () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('verifies with the standardwebhooks library', () => {
    const secret = newWebhookSecret();

    expect(new Webhook(secret).verify(body, headers([secret], now()))).toEqual(JSON.parse(body));
  });

  it('matches the Standard Webhooks reference vector', () => {
    // The example in the spec and the libraries' own tests.
    const key = secretKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    const signed = signatureHeader([key], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');

    expect(signed).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs with every secret during a rotation, so a receiver holding either one verifies', () => {
    const [previous, current] = [newWebhookSecret(), newWebhookSecret()];
    const sent = headers([current, previous], now());

    expect(sent['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(previous).verify(body, sent)).not.toThrow();
    expect(() => new Webhook(current).verify(body, sent)).not.toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, sent)).toThrow(/No matching signature/);
  });

  it('is refused for another body or a stale timestamp', () => {
    const secret = newWebhookSecret();

    expect(() => new Webhook(secret).verify(body.replace('live', 'ended'), headers([secret], now()))).toThrow();
    expect(() => new Webhook(secret).verify(body, headers([secret], now() - 600))).toThrow(/too old/);
  });
});

describe(newWebhookSecret.name, () => {
  it('is whsec_ and 32 random bytes in standard base64', () => {
    const secret = newWebhookSecret();

    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKey(secret)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});
