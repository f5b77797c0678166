import { describe, expect, it } from 'vitest';
import { fastestNic, isVirtualInterface, parseNicSpeed } from './nic.js';

describe(parseNicSpeed.name, () => {
  it('reads a link speed in Mb/s', () => {
    expect(parseNicSpeed('10000\n')).toBe(10_000);
  });

  it('treats the forms of "unknown" as no reading', () => {
    for (const text of ['-1\n', '0\n', '65535\n', '4294967295\n', '']) expect(parseNicSpeed(text)).toBeUndefined();
  });
});

describe(isVirtualInterface.name, () => {
  it('tells a PCI NIC from loopback, bridges and veths', () => {
    expect(isVirtualInterface('../../devices/pci0000:00/0000:00:03.0/net/eno1')).toBe(false);
    expect(isVirtualInterface('../../devices/virtual/net/lo')).toBe(true);
    expect(isVirtualInterface('../../devices/virtual/net/docker0')).toBe(true);
  });
});

describe(fastestNic.name, () => {
  it('takes the fastest known link, or none', () => {
    expect(fastestNic([1_000, undefined, 25_000])).toBe(25_000);
    expect(fastestNic([undefined])).toBeUndefined();
  });
});
