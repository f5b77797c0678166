import { describe, expect, it } from 'vitest';
import { busyMillicores, parseMeminfo, parseProcStat } from './proc.js';

const MEMINFO = `MemTotal:       24684096 kB
MemFree:        21216536 kB
MemAvailable:   23918868 kB
Buffers:           51740 kB
Cached:          2607552 kB
SwapCached:            0 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
`;

const STAT = (user: number, idle: number) => `cpu  ${user} 100 ${user / 2} ${idle} 50 0 20 0 0 0
cpu0 ${user / 2} 50 ${user / 4} ${idle / 2} 25 0 10 0 0 0
cpu1 ${user / 2} 50 ${user / 4} ${idle / 2} 25 0 10 0 0 0
intr 123456 0 9 0
ctxt 987654
btime 1700000000
processes 4242
`;

describe(parseMeminfo.name, () => {
  it('reads total and available memory in bytes', () => {
    const sut = parseMeminfo(MEMINFO);

    expect(sut).toEqual({ totalBytes: 24684096 * 1024, availableBytes: 23918868 * 1024 });
  });

  it('estimates available memory on kernels without MemAvailable', () => {
    const sut = parseMeminfo('MemTotal: 1000 kB\nMemFree: 200 kB\nBuffers: 50 kB\nCached: 100 kB\n');

    expect(sut.availableBytes).toBe(350 * 1024);
  });

  it('refuses a file without MemTotal', () => {
    expect(() => parseMeminfo('')).toThrow(/MemTotal/);
  });
});

describe(parseProcStat.name, () => {
  it('sums busy and idle ticks (iowait counts as idle) and counts the CPUs', () => {
    const sut = parseProcStat(STAT(1000, 8000));

    expect(sut).toEqual({ idle: 8050, total: 1000 + 100 + 500 + 8000 + 50 + 20, cpus: 2 });
  });
});

describe(busyMillicores.name, () => {
  it('turns the busy share between two samples into millicores across all CPUs', () => {
    const before = { idle: 1000, total: 2000, cpus: 4 };
    const after = { idle: 1750, total: 3000, cpus: 4 };

    expect(busyMillicores(before, after)).toBe(1_000); // 25 % of 4 CPUs
  });

  it('reports 0 when no time passed between samples', () => {
    const sample = parseProcStat(STAT(1000, 8000));

    expect(busyMillicores(sample, sample)).toBe(0);
  });
});
