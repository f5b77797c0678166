import { TestDnsServer } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LookupBusyError, WebhookResolver } from './webhook-resolver.js';

describe(WebhookResolver.name, () => {
  let dns: TestDnsServer;
  let sut: WebhookResolver;

  beforeAll(async () => {
    dns = await TestDnsServer.start({
      host: '127.0.0.1',
      records: { 'hooks.good.test': '127.0.0.7' },
      blackHoled: ['a.hole.test', 'b.hole.test', 'c.hole.test'],
    });
    sut = new WebhookResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, perAppLookups: 2 });
  });
  afterAll(async () => {
    sut.close();
    await dns.stop();
  });

  it('resolves a name on its own resolver and shares one lookup among concurrent callers', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => sut.resolve('hooks.good.test', 'app_a')));
    expect(answers.every((a) => a.length === 1 && a[0]!.address === '127.0.0.7' && a[0]!.family === 4)).toBe(true);
    // One A and one AAAA query for twenty callers, then the answer is kept for its TTL.
    expect(dns.seen('hooks.good.test')).toBe(2);
    await sut.resolve('hooks.good.test', 'app_b');
    expect(dns.seen('hooks.good.test')).toBe(2);
  });

  it('fails a black-holed name with a timeout, and caps the names one app has resolving while others resolve', async () => {
    const first = sut.resolve('a.hole.test', 'app_slow');
    const second = sut.resolve('b.hole.test', 'app_slow');
    await expect(sut.resolve('c.hole.test', 'app_slow')).rejects.toBeInstanceOf(LookupBusyError);
    // Another app, and the same app's name already resolving, are not refused.
    const [other] = await Promise.all([sut.resolve('localhost', 'app_other'), sut.resolve('127.0.0.9', 'app_slow')]);
    expect(other.map((a) => a.address)).toEqual(['127.0.0.1', '::1']);
    await expect(first).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await expect(second).rejects.toMatchObject({ code: 'ETIMEOUT' });
    // Once the lookups ended, the app resolves again.
    await expect(sut.resolve('c.hole.test', 'app_slow')).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });
});
