import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

export type TreeSample = Readonly<{ at: number; pids: readonly number[]; pssMb: number; rssMb: number; cpuSeconds: number }>;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // the process exited between listing and reading
  }
}

/** pid → parent pid for every live process. */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields?.[1] !== undefined) map.set(Number(entry), Number(fields[1]));
  }
  return map;
}

/** The processes rooted at `roots`, roots included. */
export function processTree(roots: readonly number[]): number[] {
  const parentOf = parents();
  const tree = new Set(roots.filter((pid) => parentOf.has(pid)));
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parentOf) {
      if (!tree.has(pid) && tree.has(ppid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

/** Live processes whose command line contains `needle` (e.g. "run-handler"). */
export function pidsMatching(needle: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)
    .filter((e) => (read(`/proc/${e}/cmdline`) ?? '').split('\0').join(' ').includes(needle))
    .map(Number);
}

function kb(text: string | undefined, field: string): number {
  const match = text?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

function cpuTicks(pid: number): number {
  const stat = read(`/proc/${pid}/stat`);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: fields 14–17 of stat, 12–15 after the command name.
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields?.[i] ?? 0), 0);
}

/**
 * How many times the process's main thread (a Node.js process's event loop) went to sleep waiting
 * for something (`voluntary_ctxt_switches`): once per wake-up when it runs out of work.
 */
export function voluntarySwitches(pid: number): number {
  const match = read(`/proc/${pid}/status`)?.match(/^voluntary_ctxt_switches:\s+(\d+)/m);
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

/**
 * Memory and CPU time of a process tree. PSS splits shared pages (Chromium's many processes, the
 * GStreamer libraries) among the processes that map them, so trees can be added up; RSS would
 * count them once per process.
 */
export function sampleTree(roots: readonly number[]): TreeSample {
  const pids = processTree(roots);
  let pss = 0;
  let rss = 0;
  let ticks = 0;
  for (const pid of pids) {
    pss += kb(read(`/proc/${pid}/smaps_rollup`), 'Pss');
    rss += kb(read(`/proc/${pid}/status`), 'VmRSS');
    ticks += cpuTicks(pid);
  }
  return { at: performance.now(), pids, pssMb: pss / 1024, rssMb: rss / 1024, cpuSeconds: ticks / TICKS_PER_SECOND };
}

/** CPU used between two samples of the same tree, in millicores (1000 = one core busy). */
export function cpuMillicores(before: TreeSample, after: TreeSample): number {
  const seconds = (after.at - before.at) / 1000;
  return seconds > 0 ? Math.max(0, ((after.cpuSeconds - before.cpuSeconds) / seconds) * 1000) : 0;
}

export type TreeUsage = Readonly<{ pssMb: number; rssMb: number; cpuMillicores: number; samples: number }>;

/**
 * Watches a tree for `durationMs`: the mean PSS / RSS over the window and its average CPU. The
 * tree is re-listed at every sample, so processes it spawns meanwhile are counted.
 */
export async function watchTree(roots: () => readonly number[], durationMs: number, intervalMs = 1_000): Promise<TreeUsage> {
  const first = sampleTree(roots());
  const samples: TreeSample[] = [];
  const end = first.at + durationMs;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, intervalMs));
    samples.push(sampleTree(roots()));
  }
  const last = samples.at(-1) ?? first;
  const avg = (pick: (s: TreeSample) => number) => samples.reduce((a, s) => a + pick(s), 0) / Math.max(1, samples.length);
  return { pssMb: avg((s) => s.pssMb), rssMb: avg((s) => s.rssMb), cpuMillicores: cpuMillicores(first, last), samples: samples.length };
}

/** Whole-host CPU busy fraction (0..1 per core summed, so 2 = two cores busy) between two reads. */
export function hostCpuTicks(): { busy: number; total: number } {
  const line = (read('/proc/stat') ?? '').split('\n')[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  const total = values.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export type NetCounters = Readonly<{ rxBytes: number; rxPackets: number; txBytes: number; txPackets: number }>;

/** Counters of one interface from /proc/net/dev (of the current network namespace). */
export function netCounters(iface: string): NetCounters {
  const row = (read('/proc/net/dev') ?? '')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith(`${iface}:`));
  const f = (
    row
      ?.slice(iface.length + 1)
      .trim()
      .split(/\s+/) ?? []
  ).map(Number);
  return { rxBytes: f[0] ?? 0, rxPackets: f[1] ?? 0, txBytes: f[8] ?? 0, txPackets: f[9] ?? 0 };
}
