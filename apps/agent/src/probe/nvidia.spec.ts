import { describe, expect, it } from 'vitest';
import { gpuBudgets, nvencSessionLimit, parseNvidiaSmiCsv } from './nvidia.js';

/** `nvidia-smi --query-gpu=name,driver_version --format=csv,noheader` on a mixed host. */
const CSV = `NVIDIA GeForce RTX 4090, 550.54.14
NVIDIA RTX A4000, 550.54.14
Tesla T4, 550.54.14
NVIDIA A100-SXM4-40GB, 550.54.14
`;

describe(parseNvidiaSmiCsv.name, () => {
  it('reads one GPU per line', () => {
    expect(parseNvidiaSmiCsv(CSV)).toEqual([
      { name: 'NVIDIA GeForce RTX 4090', driverVersion: '550.54.14' },
      { name: 'NVIDIA RTX A4000', driverVersion: '550.54.14' },
      { name: 'Tesla T4', driverVersion: '550.54.14' },
      { name: 'NVIDIA A100-SXM4-40GB', driverVersion: '550.54.14' },
    ]);
  });

  it('keeps a comma inside a name and skips blank lines', () => {
    expect(parseNvidiaSmiCsv('\nOdd, Name, 535.1\n')).toEqual([{ name: 'Odd, Name', driverVersion: '535.1' }]);
  });
});

describe(nvencSessionLimit.name, () => {
  const geforce = (driverVersion: string) => ({ name: 'NVIDIA GeForce RTX 3060', driverVersion });

  it('follows the consumer driver limit: 8 from 550, 5 from 530, 3 before', () => {
    expect(nvencSessionLimit(geforce('550.54.14'), 32)).toBe(8);
    expect(nvencSessionLimit(geforce('535.183.01'), 32)).toBe(5);
    expect(nvencSessionLimit(geforce('525.147.05'), 32)).toBe(3);
  });

  it('gives entry professional cards the consumer limit', () => {
    expect(nvencSessionLimit({ name: 'NVIDIA T400 4GB', driverVersion: '550.54.14' }, 32)).toBe(8);
  });

  it('uses the configured cap for cards without a driver limit, and 0 for cards without NVENC', () => {
    expect(gpuBudgets(parseNvidiaSmiCsv(CSV), 32).map((g) => g.nvencSessions)).toEqual([8, 32, 32, 0]);
    expect(nvencSessionLimit({ name: 'NVIDIA L4', driverVersion: '550.54.14' }, 12)).toBe(12);
  });
});
