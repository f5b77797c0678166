import { describe, expect, it } from 'vitest';
import { metricsAccess } from './metrics-access.js';

describe(metricsAccess.name, () => {
  const sut = metricsAccess;

  it('without a token, answers loopback clients only', () => {
    expect(sut(undefined, undefined, '127.0.0.1')).toBe('allowed');
    expect(sut(undefined, undefined, '::1')).toBe('allowed');
    expect(sut(undefined, undefined, '::ffff:127.0.0.1')).toBe('allowed');
    expect(sut(undefined, undefined, '10.0.0.5')).toBe('forbidden');
    expect(sut(undefined, undefined, '::ffff:192.168.1.2')).toBe('forbidden');
    expect(sut(undefined, 'Bearer anything', '203.0.113.9')).toBe('forbidden');
    expect(sut(undefined, undefined, undefined)).toBe('forbidden');
  });

  it('with a token, needs it from every client, loopback included', () => {
    const token = 'a-metrics-token-of-some-length';
    expect(sut(token, `Bearer ${token}`, '203.0.113.9')).toBe('allowed');
    expect(sut(token, undefined, '127.0.0.1')).toBe('unauthorized');
    expect(sut(token, 'Bearer wrong', '127.0.0.1')).toBe('forbidden');
    expect(sut(token, `Basic ${token}`, '127.0.0.1')).toBe('unauthorized');
  });
});
