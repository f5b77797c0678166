import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../lib/http-load.js';
import { combineRounds, roundRatios, type Slice } from './rounds.js';

const load = (reqPerSec: number, total: number, p99Ms = 1): LoadResult => ({
  reqPerSec,
  seconds: total / reqPerSec,
  p50Ms: 1,
  p99Ms,
  total,
  non2xx: 0,
  errors: 0,
  statuses: { '200': total },
});
const slice = (scenario: string, connections: number, round: number, result: LoadResult, cpuSeconds: number, clientSleeps = 0): Slice => ({
  scenario,
  connections,
  round,
  result,
  cpuSeconds,
  stackCpuSeconds: cpuSeconds,
  serverSleeps: clientSleeps / 10,
  clientSleeps,
});

describe(combineRounds.name, () => {
  it('gives one row per scenario and connection count, in the order first run, over all of its rounds', () => {
    const rows = combineRounds([
      slice('bare', 10, 1, load(20_000, 40_000), 1, 400),
      slice('mint', 10, 1, load(8_000, 16_000), 1.2, 4_000),
      slice('bare', 10, 2, load(10_000, 20_000, 9), 0.6, 800),
      slice('mint', 10, 2, load(6_000, 12_000), 0.8, 1_600),
      slice('bare', 100, 1, load(30_000, 60_000), 1.5),
    ]);

    expect(rows.map((r) => [r.scenario, r.connections])).toEqual([
      ['bare', 10],
      ['mint', 10],
      ['bare', 100],
    ]);
    const bare = rows[0]!;
    // 60,000 requests in 2 + 2 s.
    expect(bare.result.reqPerSec).toBe(15_000);
    expect(bare.result.total).toBe(60_000);
    expect(bare.result.p99Ms).toBe(9);
    expect(bare.result.statuses).toEqual({ '200': 60_000 });
    // 1.6 s of CPU over 60,000 requests.
    expect(bare.cpuUsPerRequest).toBeCloseTo(26.67, 1);
    expect(rows[1]!.cpuUsPerRequest).toBeCloseTo(71.43, 1);
    // 1,200 sleeps of the load generator over 60,000 requests; the mint's 5,600 over 28,000.
    expect(bare.clientSleepsPerRequest).toBeCloseTo(0.02, 5);
    expect(bare.serverSleepsPerRequest).toBeCloseTo(0.002, 5);
    expect(rows[1]!.clientSleepsPerRequest).toBeCloseTo(0.2, 5);
  });
});

describe(roundRatios.name, () => {
  it('compares each round with the baseline of the same round', () => {
    const slices = [
      slice('bare', 10, 1, load(20_000, 40_000), 0),
      slice('mint', 10, 1, load(8_000, 16_000), 0),
      slice('bare', 10, 2, load(10_000, 20_000), 0),
      slice('mint', 10, 2, load(6_000, 12_000), 0),
      slice('mint', 100, 1, load(1, 1), 0),
    ];

    expect(roundRatios(slices, 'mint', 10, 'bare')).toBe('0.40 / 0.60');
    expect(roundRatios(slices, 'mint', 100, 'bare')).toBe('');
  });
});
