import { execFile } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { GpuBudget } from '@tally/capacity';
import type { MeasuredBudget } from '../budget.js';
import {
  cgroupDirs,
  parseCfsQuota,
  parseCgroupMounts,
  parseCpuMax,
  parseMemoryLimit,
  parseProcSelfCgroup,
  tightest,
  type CgroupMount,
} from './cgroup.js';
import { fastestNic, isVirtualInterface, parseNicSpeed } from './nic.js';
import { gpuBudgets, NVIDIA_SMI_ARGS, parseNvidiaSmiCsv } from './nvidia.js';
import { busyMillicores, parseMeminfo, parseProcStat, type CpuSample } from './proc.js';

/** What the whole host uses now, Tally or not. */
export type HostUsage = Readonly<{ cpuMillicores: number; ramMb: number }>;

/** The agent's only view of the machine. */
export type HostProbe = {
  budget(): Promise<MeasuredBudget>;
  usage(): Promise<HostUsage>;
};

export type LinuxHostProbeOptions = Readonly<{
  /** NVENC sessions counted for a GPU whose driver sets no limit. */
  nvencUnlimitedCap: number;
  /** Prefix for /proc and /sys; tests point it at a fixture tree. */
  root?: string;
  nvidiaSmi?: string;
  /** CPUs this process may run on (affinity, cpuset). */
  cores?: () => number;
  /** Gap between the two /proc/stat samples of the first usage() call. */
  firstSampleGapMs?: number;
}>;

const MIB = 1024 * 1024;
const run = promisify(execFile);

export class LinuxHostProbe implements HostProbe {
  private lastCpu: CpuSample | undefined;

  constructor(private readonly options: LinuxHostProbeOptions) {}

  async budget(): Promise<MeasuredBudget> {
    const [meminfo, limits, nicMbps, gpus] = await Promise.all([
      this.read('/proc/meminfo').then((text) => parseMeminfo(text ?? '')),
      this.cgroupLimits(),
      this.nicMbps(),
      this.gpus(),
    ]);
    const cores = (this.options.cores ?? availableParallelism)();
    return {
      cpuMillicores: tightest([cores * 1_000, limits.cpuMillicores])!,
      ramMb: Math.floor(tightest([meminfo.totalBytes, limits.memoryBytes])! / MIB),
      nicMbps,
      gpus: gpus.budgets,
      warnings: gpus.warnings,
    };
  }

  async usage(): Promise<HostUsage> {
    const before = this.lastCpu ?? (await this.cpuSample());
    if (this.lastCpu === undefined) await sleep(this.options.firstSampleGapMs ?? 250);
    const [after, meminfo] = await Promise.all([this.cpuSample(), this.read('/proc/meminfo').then((text) => parseMeminfo(text ?? ''))]);
    this.lastCpu = after;
    return {
      cpuMillicores: busyMillicores(before, after),
      ramMb: Math.round((meminfo.totalBytes - meminfo.availableBytes) / MIB),
    };
  }

  private async cpuSample(): Promise<CpuSample> {
    return parseProcStat((await this.read('/proc/stat')) ?? '');
  }

  private async cgroupLimits(): Promise<{ cpuMillicores: number | undefined; memoryBytes: number | undefined }> {
    const [mountinfo, self] = await Promise.all([this.read('/proc/self/mountinfo'), this.read('/proc/self/cgroup')]);
    const mounts = parseCgroupMounts(mountinfo ?? '');
    const membership = parseProcSelfCgroup(self ?? '');
    const v2 = mounts.find((m) => m.version === 2);
    const v1 = (controller: string) => mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
    const dirsOf = (mount: CgroupMount | undefined, path: string | undefined) =>
      mount && path !== undefined ? cgroupDirs(mount, path) : [];

    const v2Dirs = dirsOf(v2, membership.unified);
    const memoryDirs = dirsOf(v1('memory'), membership.controllers.get('memory'));
    const cpuDirs = dirsOf(v1('cpu'), membership.controllers.get('cpu'));
    const [v2Memory, v2Cpu, v1Memory, v1Cpu] = await Promise.all([
      Promise.all(v2Dirs.map(async (d) => parseOptional(await this.read(join(d, 'memory.max')), parseMemoryLimit))),
      Promise.all(v2Dirs.map(async (d) => parseOptional(await this.read(join(d, 'cpu.max')), parseCpuMax))),
      Promise.all(memoryDirs.map(async (d) => parseOptional(await this.read(join(d, 'memory.limit_in_bytes')), parseMemoryLimit))),
      Promise.all(
        cpuDirs.map(async (d) => {
          const [quota, period] = await Promise.all([this.read(join(d, 'cpu.cfs_quota_us')), this.read(join(d, 'cpu.cfs_period_us'))]);
          return quota === undefined || period === undefined ? undefined : parseCfsQuota(quota, period);
        }),
      ),
    ]);
    return { cpuMillicores: tightest([...v2Cpu, ...v1Cpu]), memoryBytes: tightest([...v2Memory, ...v1Memory]) };
  }

  private async nicMbps(): Promise<number | undefined> {
    const dir = this.path('/sys/class/net');
    const names = await readdir(dir).catch(() => []);
    const speeds = await Promise.all(
      names.map(async (name) => {
        const target = await readlink(join(dir, name)).catch(() => '/devices/virtual/');
        if (isVirtualInterface(target)) return undefined;
        return parseOptional(await this.read(join('/sys/class/net', name, 'speed')), parseNicSpeed);
      }),
    );
    return fastestNic(speeds);
  }

  private async gpus(): Promise<{ budgets: GpuBudget[]; warnings: string[] }> {
    try {
      const { stdout } = await run(this.options.nvidiaSmi ?? 'nvidia-smi', [...NVIDIA_SMI_ARGS], { timeout: 10_000 });
      return { budgets: gpuBudgets(parseNvidiaSmiCsv(stdout), this.options.nvencUnlimitedCap), warnings: [] };
    } catch (error) {
      // No nvidia-smi on PATH: not a GPU node. Present but failing (driver not loaded): say so.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { budgets: [], warnings: [] };
      return { budgets: [], warnings: [`nvidia-smi failed, counting no GPUs: ${(error as Error).message.split('\n')[0]}`] };
    }
  }

  /** A file's text, or undefined when it is absent or unreadable (an unset limit, a link that is down). */
  private async read(path: string): Promise<string | undefined> {
    return readFile(this.path(path), 'utf8').catch(() => undefined);
  }

  private path(path: string): string {
    return join(this.options.root ?? '/', path);
  }
}

function parseOptional<T>(text: string | undefined, parse: (text: string) => T | undefined): T | undefined {
  return text === undefined ? undefined : parse(text);
}
