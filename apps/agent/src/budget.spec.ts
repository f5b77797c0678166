import { describe, expect, it } from 'vitest';
import { resolveBudget, type MeasuredBudget } from './budget.js';

const measured: MeasuredBudget = {
  cpuMillicores: 8_000,
  ramMb: 16_000,
  nicMbps: 10_000,
  gpus: [{ name: 'NVIDIA GeForce RTX 4090', nvencSessions: 8 }],
  warnings: [],
};

describe(resolveBudget.name, () => {
  it('passes the measurement through when nothing is overridden', () => {
    const sut = resolveBudget(measured, {});

    expect(sut).toEqual({ budget: { cpuMillicores: 8_000, ramMb: 16_000, nicMbps: 10_000, gpus: measured.gpus }, warnings: [] });
  });

  it('lets operator overrides win, up or down', () => {
    const sut = resolveBudget(measured, { cpuMillicores: 6_000, ramMb: 20_000, nicMbps: 1_000, nvencSessions: 3 });

    expect(sut.budget).toEqual({
      cpuMillicores: 6_000,
      ramMb: 20_000,
      nicMbps: 1_000,
      gpus: [{ name: 'NVIDIA GeForce RTX 4090', nvencSessions: 3 }],
    });
  });

  it('assumes the default 1 Gb/s when the NIC speed is unknown, and says so', () => {
    const sut = resolveBudget({ ...measured, nicMbps: undefined }, {});

    expect(sut.budget.nicMbps).toBe(1_000);
    expect(sut.warnings).toEqual([expect.stringContaining('TALLY_NODE_NIC_MBPS')]);
  });
});
