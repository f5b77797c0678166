import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, hostname, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

export const RESULTS_DIR = join(import.meta.dirname, '..', 'results');

/** Where a run was measured: figures from a shared or busy host are read with that in mind. */
export type HostContext = Readonly<{
  hostname: string;
  cpuModel: string;
  cores: number;
  ramMb: number;
  loadAverage1m: number;
  note?: string;
}>;

export function hostContext(): HostContext {
  const cpu = cpus();
  const note = process.env['TALLY_BENCH_NOTE'];
  return {
    hostname: hostname(),
    cpuModel: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    ramMb: Math.round(totalmem() / 2 ** 20),
    loadAverage1m: Number((loadavg()[0] ?? 0).toFixed(2)),
    ...(note ? { note } : {}),
  };
}

/** Writes `bench/results/<name>.json` (the latest run) and a timestamped copy; returns the latest's path. */
export function writeResult(name: string, data: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const measuredAt = new Date().toISOString();
  const body = `${JSON.stringify({ bench: name, measuredAt, host: hostContext(), ...(data as object) }, null, 2)}\n`;
  const latest = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(latest, body);
  writeFileSync(join(RESULTS_DIR, `${name}-${measuredAt.replace(/[:.]/g, '-')}.json`), body);
  return latest;
}
