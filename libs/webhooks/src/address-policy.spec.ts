import { describe, expect, it } from 'vitest';
import { AddressPolicy, parseCidrList } from './address-policy.js';

describe(AddressPolicy.name, () => {
  const sut = new AddressPolicy();
  const noDns = () => Promise.reject(new Error('offline'));

  it.each([
    'http://127.0.0.1:6379/',
    'http://localhost:5432/',
    'http://LOCALHOST./',
    'http://api.localhost/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[::1]:7880/',
    'http://[::]/',
    'http://0.0.0.0/',
    'http://2130706433/', // decimal 127.0.0.1
    'http://017700000001/', // octal
    'http://0x7f000001/', // hex
    'http://0x7f.1/', // hex, short form
    'http://0177.0.0.1/', // octal dotted
    'http://127.1/', // short form
    'http://10.1/',
    'http://[::ffff:127.0.0.1]/', // IPv4-mapped
    'http://[::ffff:7f00:1]/',
    'http://[::ffff:a9fe:a9fe]/', // mapped 169.254.169.254
    'http://[64:ff9b::a00:1]/', // NAT64 of 10.0.0.1
    'http://[2002:c0a8:0101::1]/', // 6to4 of 192.168.1.1
    'http://[fd12:3456::1]/', // ULA
    'http://[fe80::1]/', // link-local
    'http://[ff02::1]/', // multicast
    'http://224.0.0.1/',
    'http://255.255.255.255/',
  ])('refuses %s', async (url) => {
    expect(await sut.refusal(url, noDns)).toBeDefined();
  });

  it.each(['https://hooks.example.com/tally', 'http://93.184.215.14/', 'http://[2606:4700::1111]/', 'http://8.8.8.8:8080/x'])(
    'accepts %s',
    async (url) => {
      expect(await sut.refusal(url, noDns)).toBeUndefined();
    },
  );

  it('refuses a name that resolves to a private address, and says which', async () => {
    const refusal = await sut.refusal('https://intranet.example.com/', () => Promise.resolve(['93.184.215.14', '10.1.2.3']));

    expect(refusal).toContain('10.1.2.3');
  });

  it('lets the operator allow ranges for on-premises receivers', async () => {
    const onPrem = new AddressPolicy(parseCidrList('10.20.0.0/16, 127.0.0.0/8,::1/128'));

    expect(await onPrem.refusal('http://10.20.1.1/', noDns)).toBeUndefined();
    expect(await onPrem.refusal('http://2130706433/', noDns)).toBeUndefined();
    expect(await onPrem.refusal('http://localhost:8080/', noDns)).toBeUndefined();
    expect(await onPrem.refusal('http://10.21.1.1/', noDns)).toBeDefined();
    expect(onPrem.allows('::ffff:127.0.0.1')).toBe(true);
  });
});

describe(parseCidrList.name, () => {
  it('names the entry that is not a range', () => {
    expect(parseCidrList('')).toEqual([]);
    expect(() => parseCidrList('10.0.0.0/8,banana')).toThrow(/banana/);
    expect(() => parseCidrList('10.0.0.0/33')).toThrow(/10.0.0.0\/33/);
  });
});
