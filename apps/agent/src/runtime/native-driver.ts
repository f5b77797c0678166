import { spawn } from 'node:child_process';
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { existingPlacement, placeInCgroup, type CgroupPlacement } from './cgroup-limits.js';
import { type FileTail, followFile } from './file-tail.js';
import { OutputLog } from './output-log.js';
import type { LimitEnforcement, WorkerDriver, WorkerExitInfo, WorkerHandle, WorkerLimits, WorkerSpec } from './worker-driver.js';

export type NativeDriverOptions = Readonly<{
  /** Where pid files live, so a restarted agent finds the workers its predecessor left. */
  stateDir: string;
  cgroupRoot?: string;
}>;

type NativeHandle = WorkerHandle & Readonly<{ pid: number; placement: CgroupPlacement; output: OutputLog }>;

/** What a running worker's agent records beside its pid file, so the next agent can adopt it. */
type WorkerState = Readonly<{
  pid: number;
  enforcedBy: LimitEnforcement;
  procsFiles: readonly string[];
  limits: WorkerLimits;
  startedAt: string;
}>;

const ADOPTED_POLL_MS = 1_000;

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
    // Output goes to the log file, not a pipe: a worker must outlive an agent handing it over.
    const logFile = join(spec.workDir, `${spec.kind}.log`);
    const fd = openSync(logFile, 'a', 0o600);
    const offset = fstatSync(fd).size;
    const child = spawn('sh', ['-c', script, spec.name, ...placement.commandPrefix, ...spec.command], {
      cwd: spec.workDir,
      env: { ...spec.env },
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    if (child.pid === undefined) {
      placement.remove();
      return new Promise((_, reject) => child.once('error', reject));
    }
    const pid = child.pid;
    const startedAt = new Date();
    const { pidFile, stateFile } = this.files(spec.name);
    writeFileSync(pidFile, String(pid));
    const state: WorkerState = {
      pid,
      enforcedBy: placement.enforcedBy,
      procsFiles: placement.procsFiles,
      limits: spec.limits,
      startedAt: startedAt.toISOString(),
    };
    writeFileSync(stateFile, JSON.stringify(state));
    const output = new OutputLog(undefined);
    const tail = followFile(logFile, offset, (line) => output.push(line));
    const exited = new Promise<WorkerExitInfo>((resolve) => {
      child.once('exit', (code, signal) => {
        resolve(this.ended(spec.name, pid, placement, tail, { code, signal }));
      });
    });
    return Promise.resolve(this.handle(spec, pid, placement, output, startedAt, exited));
  }

  /**
   * Takes over the worker a previous agent started under this spec's name, when it still runs
   * (an upgrade hands workers over instead of stopping them, so recordings go on). Its exit is
   * noticed by polling, since it is not this process's child.
   */
  adopt(spec: WorkerSpec): Promise<WorkerHandle | undefined> {
    const { stateFile } = this.files(spec.name);
    const state = readState(stateFile);
    if (!state || !alive(state.pid) || !sameDir(`/proc/${state.pid}/cwd`, spec.workDir)) return Promise.resolve(undefined);
    const { pid } = state;
    const placement = existingPlacement(state.enforcedBy, state.procsFiles);
    const logFile = join(spec.workDir, `${spec.kind}.log`);
    const output = new OutputLog(undefined);
    const tail = followFile(logFile, sizeOf(logFile), (line) => output.push(line));
    const exited = new Promise<WorkerExitInfo>((resolve) => {
      const timer = setInterval(() => {
        if (alive(pid)) return;
        clearInterval(timer);
        resolve(this.ended(spec.name, pid, placement, tail, { code: null, signal: null }));
      }, ADOPTED_POLL_MS);
    });
    return Promise.resolve(this.handle({ ...spec, limits: state.limits }, pid, placement, output, new Date(state.startedAt), exited));
  }

  private handle(
    spec: WorkerSpec,
    pid: number,
    placement: CgroupPlacement,
    output: OutputLog,
    startedAt: Date,
    exited: Promise<WorkerExitInfo>,
  ): NativeHandle {
    return {
      id: String(pid),
      pid,
      spec,
      placement,
      output,
      enforcedBy: placement.enforcedBy,
      startedAt,
      exited,
      onOutput: (listener) => output.subscribe(listener),
    };
  }

  private ended(
    name: string,
    pid: number,
    placement: CgroupPlacement,
    tail: FileTail,
    exit: Pick<WorkerExitInfo, 'code' | 'signal'>,
  ): WorkerExitInfo {
    // The kernel's OOM killer sends SIGKILL; the cgroup's counter says whether it was that.
    const oomKilled = placement.oomKills() > 0;
    tail.stop();
    const { pidFile, stateFile } = this.files(name);
    rmSync(pidFile, { force: true });
    rmSync(stateFile, { force: true });
    killGroup(pid, 'SIGKILL');
    placement.remove();
    return { ...exit, oomKilled };
  }

  private files(name: string): { pidFile: string; stateFile: string } {
    return { pidFile: join(this.options.stateDir, `${name}.pid`), stateFile: join(this.options.stateDir, `${name}.state.json`) };
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
      rmSync(path.replace(/\.pid$/, '.state.json'), { force: true });
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

function readState(file: string): WorkerState | undefined {
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as Partial<WorkerState>;
    if (typeof state.pid !== 'number' || state.pid <= 1 || !state.limits || !state.enforcedBy || !Array.isArray(state.procsFiles))
      return undefined;
    return { ...(state as WorkerState), startedAt: typeof state.startedAt === 'string' ? state.startedAt : new Date().toISOString() };
  } catch {
    return undefined;
  }
}

/** Running and not a zombie (an orphan waits for PID 1 to reap it, which may be late). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function sameDir(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
