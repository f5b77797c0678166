import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LimitEnforcement, WorkerLimits } from './worker-driver.js';

/** Where a native worker's limits live, and how to read what the kernel did to it. */
export type CgroupPlacement = Readonly<{
  enforcedBy: LimitEnforcement;
  /** Files the worker's shell writes its pid into before exec-ing the program. */
  procsFiles: readonly string[];
  /** A program prefix for limits that are not cgroups (rlimit), else empty. */
  commandPrefix: readonly string[];
  oomKills(): number;
  rssMb(): number | null;
  remove(): void;
}>;

const PERIOD_US = 100_000;

/**
 * cgroup v2 where the unified hierarchy has the memory and cpu controllers, else cgroup v1's
 * memory and cpu hierarchies when they are writable, else RLIMIT_DATA through prlimit (memory
 * only). `root` is the cgroup filesystem's mount point (/sys/fs/cgroup).
 */
export function placeInCgroup(name: string, limits: WorkerLimits, root = '/sys/fs/cgroup'): CgroupPlacement {
  return tryV2(name, limits, root) ?? tryV1(name, limits, root) ?? rlimit(limits);
}

function tryV2(name: string, limits: WorkerLimits, root: string): CgroupPlacement | undefined {
  const controllers = read(join(root, 'cgroup.controllers'));
  if (!controllers || !['memory', 'cpu'].every((c) => controllers.split(/\s+/).includes(c))) return undefined;
  try {
    const parent = join(root, 'tally-workers');
    mkdirSync(parent, { recursive: true });
    writeFileSync(join(root, 'cgroup.subtree_control'), '+memory +cpu');
    writeFileSync(join(parent, 'cgroup.subtree_control'), '+memory +cpu');
    const dir = join(parent, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
    writeFileSync(join(dir, 'memory.swap.max'), '0');
    writeFileSync(join(dir, 'cpu.max'), `${cpuQuotaUs(limits)} ${PERIOD_US}`);
    return v2Placement(dir);
  } catch {
    return undefined;
  }
}

function v2Placement(dir: string): CgroupPlacement {
  return {
    enforcedBy: 'cgroup2',
    procsFiles: [join(dir, 'cgroup.procs')],
    commandPrefix: [],
    oomKills: () => counter(read(join(dir, 'memory.events')), 'oom_kill'),
    rssMb: () => mb(counter(read(join(dir, 'memory.stat')), 'anon')),
    remove: () => removeDir(dir),
  };
}

function tryV1(name: string, limits: WorkerLimits, root: string): CgroupPlacement | undefined {
  const memory = join(root, 'memory', 'tally-workers', name);
  const cpu = join(root, 'cpu', 'tally-workers', name);
  if (!existsSync(join(root, 'memory', 'memory.limit_in_bytes')) || !existsSync(join(root, 'cpu', 'cpu.cfs_quota_us'))) return undefined;
  try {
    mkdirSync(memory, { recursive: true });
    mkdirSync(cpu, { recursive: true });
    writeFileSync(join(memory, 'memory.limit_in_bytes'), String(limits.memoryMb * 1024 * 1024));
    writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(cpuQuotaUs(limits)));
    return v1Placement(memory, cpu);
  } catch {
    return undefined;
  }
}

function v1Placement(memory: string, cpu: string): CgroupPlacement {
  return {
    enforcedBy: 'cgroup1',
    procsFiles: [join(memory, 'cgroup.procs'), join(cpu, 'cgroup.procs')],
    commandPrefix: [],
    oomKills: () => counter(read(join(memory, 'memory.oom_control')), 'oom_kill'),
    rssMb: () => mb(counter(read(join(memory, 'memory.stat')), 'total_rss')),
    remove: () => {
      removeDir(memory);
      removeDir(cpu);
    },
  };
}

/** The placement a worker started by a previous agent got, from what that agent recorded. */
export function existingPlacement(enforcedBy: LimitEnforcement, procsFiles: readonly string[]): CgroupPlacement {
  const [first, second] = procsFiles.map((file) => dirname(file));
  if (enforcedBy === 'cgroup2' && first) return v2Placement(first);
  if (enforcedBy === 'cgroup1' && first && second) return v1Placement(first, second);
  return { ...rlimit({ memoryMb: 0, cpuMillicores: 0 }), enforcedBy, commandPrefix: [] };
}

function rlimit(limits: WorkerLimits): CgroupPlacement {
  return {
    enforcedBy: 'rlimit',
    procsFiles: [],
    commandPrefix: ['prlimit', `--data=${limits.memoryMb * 1024 * 1024}`, '--'],
    oomKills: () => 0,
    rssMb: () => null,
    remove: () => undefined,
  };
}

function cpuQuotaUs(limits: WorkerLimits): number {
  return Math.max(1_000, Math.round((limits.cpuMillicores / 1000) * PERIOD_US));
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** `key value` lines, as memory.events, memory.stat and memory.oom_control hold them. */
export function counter(text: string | undefined, key: string): number {
  const line = text?.split('\n').find((l) => l.startsWith(`${key} `));
  return line ? Number(line.slice(key.length + 1)) || 0 : 0;
}

function mb(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

/** A cgroup directory goes once its last process has; a few tries cover the kernel's lag. */
function removeDir(dir: string): void {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      rmdirSync(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}
