import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { placeInCgroup, type CgroupPlacement } from './cgroup-limits.js';
import { OutputLog } from './output-log.js';
import type { WorkerDriver, WorkerExitInfo, WorkerHandle, WorkerSpec } from './worker-driver.js';

export type NativeDriverOptions = Readonly<{
  /** Where pid files live, so a restarted agent finds the workers its predecessor left. */
  stateDir: string;
  cgroupRoot?: string;
}>;

type NativeHandle = WorkerHandle & Readonly<{ pid: number; placement: CgroupPlacement; output: OutputLog }>;

/**
 * Workers as child processes in their own process group. Limits go on a cgroup the worker's
 * shell joins before exec-ing the program, so nothing runs unlimited even for a moment.
 */
export class NativeDriver implements WorkerDriver {
  readonly name = 'native';

  constructor(private readonly options: NativeDriverOptions) {
    mkdirSync(options.stateDir, { recursive: true });
  }

  get stateDir(): string {
    return this.options.stateDir;
  }

  start(spec: WorkerSpec): Promise<WorkerHandle> {
    mkdirSync(spec.workDir, { recursive: true });
    for (const file of spec.files) writeFileSync(join(spec.workDir, file.name), file.content, { mode: 0o600 });
    const placement = placeInCgroup(spec.name, spec.limits, this.options.cgroupRoot);
    // `$0` is the shell itself; the program and its arguments follow as "$@".
    const join_ = placement.procsFiles.map((file) => `echo $$ > '${file}'`).join(' && ');
    const script = `${join_ === '' ? '' : `${join_} && `}exec "$@"`;
    const child = spawn('sh', ['-c', script, spec.name, ...placement.commandPrefix, ...spec.command], {
      cwd: spec.workDir,
      env: { ...spec.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) {
      placement.remove();
      return new Promise((_, reject) => child.once('error', reject));
    }
    const pid = child.pid;
    const pidFile = join(this.options.stateDir, `${spec.name}.pid`);
    writeFileSync(pidFile, String(pid));
    const output = new OutputLog(join(spec.workDir, `${spec.kind}.log`));
    for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => output.push(line));
    const exited = new Promise<WorkerExitInfo>((resolve) => {
      child.once('exit', (code, signal) => {
        // The kernel's OOM killer sends SIGKILL; the cgroup's counter says whether it was that.
        const oomKilled = placement.oomKills() > 0;
        rmSync(pidFile, { force: true });
        killGroup(pid, 'SIGKILL');
        placement.remove();
        resolve({ code, signal, oomKilled });
      });
    });
    const handle: NativeHandle = {
      id: String(pid),
      pid,
      spec,
      placement,
      output,
      enforcedBy: placement.enforcedBy,
      startedAt: new Date(),
      exited,
      onOutput: (listener) => output.subscribe(listener),
    };
    return Promise.resolve(handle);
  }

  async stop(handle: WorkerHandle, graceMs: number): Promise<void> {
    const { pid } = handle as NativeHandle;
    killGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
    await handle.exited;
    clearTimeout(timer);
  }

  rssMb(handle: WorkerHandle): Promise<number | null> {
    const { pid, placement } = handle as NativeHandle;
    return Promise.resolve(placement.rssMb() ?? processGroupRssMb(pid));
  }

  logs(handle: WorkerHandle, lines: number): Promise<string> {
    return Promise.resolve((handle as NativeHandle).output.tail(lines).join('\n'));
  }

  removeOrphans(namePrefix: string): Promise<number> {
    let removed = 0;
    for (const file of readdirSync(this.options.stateDir).filter((f) => f.startsWith(namePrefix) && f.endsWith('.pid'))) {
      const path = join(this.options.stateDir, file);
      const pid = Number(readFileSync(path, 'utf8'));
      if (Number.isInteger(pid) && pid > 1 && killGroup(pid, 'SIGKILL')) removed++;
      rmSync(path, { force: true });
    }
    return Promise.resolve(removed);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Sum of VmRSS over the processes of the worker's process group, from /proc. */
function processGroupRssMb(pgid: number): number | null {
  let kb = 0;
  let found = false;
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command: state ppid pgrp ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const rss = /VmRSS:\s+(\d+) kB/.exec(status);
      kb += rss ? Number(rss[1]) : 0;
      found = true;
    } catch {
      // The process ended while we looked.
    }
  }
  return found ? Math.round(kb / 1024) : null;
}
