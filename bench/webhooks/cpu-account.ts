import { readFileSync } from 'node:fs';
import { hostCpuTicks, pidsMatching, sampleTree } from '../lib/proc.js';

/** CPU seconds used so far by each party of the outbox run, and by the whole host. */
export type CpuSnapshot = Readonly<{ worker: number; postgres: number; bench: number; hostBusy: number }>;

/** Linux's USER_HZ: /proc/stat counts host CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

/**
 * Where the drain's CPU goes, from /proc (CPU time, not a profiler's wall-clock samples, which
 * charge a syscall with the time the process waited for the core it gave away): the worker
 * processes, the PostgreSQL cluster (postmaster, its backends, reaped ones included), this bench
 * process (the receiver), and the rest of the host (other work sharing its cores).
 */
export class CpuAccount {
  private readonly postmaster: number[];

  constructor(postgresUrl: string) {
    // The postmaster itself (comm "postgres"), not a supervisor whose command line names it.
    this.postmaster = pidsMatching(` -p ${new URL(postgresUrl).port} `).filter((pid) => comm(pid) === 'postgres');
    if (this.postmaster.length !== 1) throw new Error(`expected one postmaster on ${postgresUrl}, found ${this.postmaster.length}`);
  }

  /** `workerSeconds`: the CPU seconds of the worker processes so far (a killed one's as sampled before the kill). */
  snapshot(workerSeconds: number): CpuSnapshot {
    const self = process.cpuUsage();
    return {
      worker: workerSeconds,
      postgres: sampleTree(this.postmaster).cpuSeconds,
      bench: (self.user + self.system) / 1e6,
      hostBusy: hostCpuTicks().busy / TICKS_PER_SECOND,
    };
  }
}

/** CPU seconds of one process (its reaped children included). */
export function processCpuSeconds(pid: number | undefined): number {
  return pid === undefined ? 0 : sampleTree([pid]).cpuSeconds;
}

/** µs of CPU per delivery between two snapshots, by party; `other` is the host's busy time none of them used. */
export function perDelivery(from: CpuSnapshot, to: CpuSnapshot, deliveries: number) {
  const us = (s: number) => (s * 1e6) / deliveries;
  const worker = us(to.worker - from.worker);
  const postgres = us(to.postgres - from.postgres);
  const bench = us(to.bench - from.bench);
  const host = us(to.hostBusy - from.hostBusy);
  return { worker, postgres, receiver: bench, other: Math.max(0, host - worker - postgres - bench) };
}

function comm(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}
