import type { LoadResult } from '../lib/http-load.js';

/**
 * One round of one scenario at one connection count: its load, the CPU its server (and the stack)
 * spent, and how often the server's event loop and the load generator's went to sleep.
 */
export type Slice = Readonly<{
  scenario: string;
  connections: number;
  round: number;
  result: LoadResult;
  cpuSeconds: number;
  stackCpuSeconds: number;
  serverSleeps: number;
  clientSleeps: number;
}>;

/** A scenario's rounds at one connection count taken together. */
export type Row = Readonly<{
  scenario: string;
  connections: number;
  result: LoadResult;
  cpuUsPerRequest: number;
  stackCpuUsPerRequest: number;
  serverSleepsPerRequest: number;
  clientSleepsPerRequest: number;
}>;

/**
 * The rounds of each scenario and connection count as one row, in the order first run: req/s is
 * every request of the rounds over their time together, the median the rounds' mean, p99 the worst
 * round's, counts, CPU and sleeps summed (per request over every request of the rounds).
 */
export function combineRounds(slices: readonly Slice[]): Row[] {
  const groups = new Map<string, Slice[]>();
  for (const s of slices) {
    const key = `${s.connections}\u0000${s.scenario}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0]!;
    const sum = (f: (s: Slice) => number) => group.reduce((total, s) => total + f(s), 0);
    const total = sum((s) => s.result.total);
    const statuses: Record<string, number> = {};
    for (const s of group) for (const [code, n] of Object.entries(s.result.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    const per = (n: number, d: number) => (d > 0 ? n / d : 0);
    const perRequest = (seconds: number) => per(seconds * 1e6, total);
    return {
      scenario: first.scenario,
      connections: first.connections,
      result: {
        reqPerSec: per(
          total,
          sum((s) => s.result.seconds),
        ),
        seconds: sum((s) => s.result.seconds),
        p50Ms: sum((s) => s.result.p50Ms) / group.length,
        p99Ms: Math.max(...group.map((s) => s.result.p99Ms)),
        total,
        non2xx: sum((s) => s.result.non2xx),
        errors: sum((s) => s.result.errors),
        statuses,
      },
      cpuUsPerRequest: perRequest(sum((s) => s.cpuSeconds)),
      stackCpuUsPerRequest: perRequest(sum((s) => s.stackCpuSeconds)),
      serverSleepsPerRequest: per(
        sum((s) => s.serverSleeps),
        total,
      ),
      clientSleepsPerRequest: per(
        sum((s) => s.clientSleeps),
        total,
      ),
    };
  });
}

/** `scenario`'s requests per second (over the round's whole time) over the baseline's in the same round, round by round ("0.48 / 0.52 / 0.50"); blank without rounds of both. */
export function roundRatios(slices: readonly Slice[], scenario: string, connections: number, baseline: string): string {
  const of = (name: string) => slices.filter((s) => s.scenario === name && s.connections === connections);
  const ratios = of(scenario).flatMap((s) => {
    const base = of(baseline).find((b) => b.round === s.round);
    const rate = (r: Slice['result']) => (r.seconds > 0 ? r.total / r.seconds : 0);
    return base && rate(base.result) > 0 ? [(rate(s.result) / rate(base.result)).toFixed(2)] : [];
  });
  return ratios.join(' / ');
}
