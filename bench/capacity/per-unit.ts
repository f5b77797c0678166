import type { TreeUsage } from '../lib/proc.js';
import type { Measured } from './profile.js';

/** What `n` units of a workload cost a process tree: its busy usage minus its idle usage, per unit. */
export const perUnit = (busy: TreeUsage, idle: TreeUsage, n: number): Measured => ({
  ramMb: Math.max(0, busy.pssMb - idle.pssMb) / n,
  cpuMillicores: Math.max(0, busy.cpuMillicores - idle.cpuMillicores) / n,
});

/** Bytes per second as the bench prints it, or `no rate` when either figure is missing. */
export const rateOf = (bytes: number | null, seconds: number | null) =>
  bytes !== null && seconds !== null && seconds > 0 ? `${Math.round(bytes / seconds)} B/s` : 'no rate';
