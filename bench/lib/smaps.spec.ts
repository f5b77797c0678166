import { describe, expect, it } from 'vitest';
import { meanBreakdown, memoryBreakdown } from './smaps.js';

const mapping = (range: string, name: string, pss: number, rss: number, dirty: number) =>
  [
    `${range} rw-p 00000000 00:00 0          ${name}`,
    `Size:               4096 kB`,
    `Rss:                ${rss} kB`,
    `Pss:                ${pss} kB`,
    `Private_Dirty:      ${dirty} kB`,
    `VmFlags: rd wr mr mw me ac sd`,
  ].join('\n');

const BINARY = '/opt/tools/bin/egress';

const SMAPS = [
  mapping('00400000-02000000', BINARY, 900, 20_000, 300),
  mapping('245b8f000000-245b90000000', '', 6_000, 6_000, 6_000),
  mapping('0341c000-0541c000', '', 100, 100, 100),
  mapping('7f0000000000-7f0004000000', '', 2_000, 2_000, 2_000),
  mapping('01000000-01100000', '[heap]', 1_500, 1_500, 1_500),
  mapping('7ffd00000000-7ffd00021000', '[stack]', 40, 40, 40),
  mapping('7f1000000000-7f1000100000', '/usr/lib/x86_64-linux-gnu/libgstreamer-1.0.so.0.2200.0', 100, 1_200, 30),
  mapping('7f1100000000-7f1100100000', '/usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstvpx.so', 50, 300, 10),
  mapping('7f1200000000-7f1200100000', '/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0.7400.6', 20, 400, 8),
  mapping('7f1300000000-7f1300100000', '/usr/lib/x86_64-linux-gnu/libc.so.6', 30, 1_600, 20),
  mapping('7f1400000000-7f1400001000', '[vdso]', 0, 4, 0),
].join('\n');

describe(memoryBreakdown.name, () => {
  it("tells the Go heap from other anonymous memory and the binary's data, and the GStreamer libraries from the rest", () => {
    const sut = memoryBreakdown(SMAPS, BINARY);

    expect(sut['Go heap']).toEqual({ pssKb: 6_000, rssKb: 6_000, privateDirtyKb: 6_000 });
    expect(sut['other anonymous']).toEqual({ pssKb: 2_000, rssKb: 2_004, privateDirtyKb: 2_000 });
    expect(sut['C heap (main arena)'].pssKb).toBe(1_500);
    expect(sut.stacks.pssKb).toBe(40);
    expect(sut['program binary']).toEqual({ pssKb: 1_000, rssKb: 20_100, privateDirtyKb: 400 });
    expect(sut['GStreamer and GLib']).toEqual({ pssKb: 170, rssKb: 1_900, privateDirtyKb: 48 });
    expect(sut['other libraries']).toEqual({ pssKb: 30, rssKb: 1_600, privateDirtyKb: 20 });
  });

  it('counts a binary replaced on disk while it runs as the program', () => {
    const sut = memoryBreakdown(mapping('00400000-02000000', `${BINARY} (deleted)`, 700, 9_000, 100), BINARY);

    expect(sut['program binary'].pssKb).toBe(700);
  });
});

describe(meanBreakdown.name, () => {
  it('averages each part over the processes', () => {
    const a = memoryBreakdown(SMAPS, BINARY);
    const b = memoryBreakdown(mapping('c000000000-c000800000', '', 2_000, 2_000, 2_000), BINARY);

    const sut = meanBreakdown([a, b]);

    expect(sut['Go heap'].pssKb).toBe(4_000);
    expect(sut['program binary'].pssKb).toBe(500);
  });
});
