import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export type ProcSample = Readonly<{ at: number; cpuS: number; sentBytes: number }>;

const TICKS_PER_S = 100;

/**
 * CPU seconds (user + system) of the server process so far, and the bytes the kernel has sent on the
 * established TCP connections of its port (from `ss`, so send() and write() count alike).
 */
export function sample(pid: number, port: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuS = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  const ss = execFileSync('ss', ['-tinH', 'state', 'established', `( sport = :${port} )`]).toString();
  const sentBytes = [...ss.matchAll(/bytes_sent:(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  return { at: performance.now(), cpuS, sentBytes };
}

export type StepFigures = Readonly<{ cpuPercent: number; bytesPerS: number; bytesPerCpuS: number }>;

export function figures(from: ProcSample, to: ProcSample): StepFigures {
  const wallS = (to.at - from.at) / 1000;
  const cpuS = to.cpuS - from.cpuS;
  const bytes = to.sentBytes - from.sentBytes;
  return { cpuPercent: (100 * cpuS) / wallS, bytesPerS: bytes / wallS, bytesPerCpuS: cpuS > 0 ? bytes / cpuS : Number.POSITIVE_INFINITY };
}
