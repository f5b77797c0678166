/** Host-wide readings from /proc. Sizes in bytes. */
export type Meminfo = Readonly<{ totalBytes: number; availableBytes: number }>;

/** /proc/meminfo; kernels before 3.14 lack MemAvailable, so free + buffers + cache stands in. */
export function parseMeminfo(text: string): Meminfo {
  const kb = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+):\s+(\d+)\s*kB/.exec(line);
    if (match) kb.set(match[1]!, Number(match[2]));
  }
  const total = kb.get('MemTotal');
  if (total === undefined) throw new Error('/proc/meminfo has no MemTotal');
  const available = kb.get('MemAvailable') ?? (kb.get('MemFree') ?? 0) + (kb.get('Buffers') ?? 0) + (kb.get('Cached') ?? 0);
  return { totalBytes: total * 1024, availableBytes: Math.min(available, total) * 1024 };
}

/** Cumulative CPU time of all CPUs, in clock ticks, and how many CPUs that covers. */
export type CpuSample = Readonly<{ idle: number; total: number; cpus: number }>;

export function parseProcStat(text: string): CpuSample {
  const lines = text.split('\n');
  const aggregate = lines.find((l) => /^cpu\s/.test(l));
  if (aggregate === undefined) throw new Error('/proc/stat has no cpu line');
  // user nice system idle iowait irq softirq steal; guest time is already counted in user and nice.
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = aggregate
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return {
    idle: idle + iowait,
    total: user + nice + system + idle + iowait + irq + softirq + steal,
    cpus: lines.filter((l) => /^cpu\d+\s/.test(l)).length,
  };
}

/** CPU the host spent between two samples, in millicores (1000 = one busy CPU). */
export function busyMillicores(before: CpuSample, after: CpuSample): number {
  const total = after.total - before.total;
  if (total <= 0) return 0;
  const busy = 1 - (after.idle - before.idle) / total;
  return Math.round(Math.min(1, Math.max(0, busy)) * after.cpus * 1_000);
}
