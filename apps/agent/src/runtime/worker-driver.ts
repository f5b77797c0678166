import type { WorkerKind, WorkerView } from '@tally/contracts';

export type WorkerLimits = Readonly<{ memoryMb: number; cpuMillicores: number }>;
export type LimitEnforcement = WorkerView['limits']['enforcedBy'];

/** Everything a driver needs to run one worker; the same spec runs as a container or a child process. */
export type WorkerSpec = Readonly<{
  kind: WorkerKind;
  /** Unique on the host: the container name, and the cgroup name of a native worker. */
  name: string;
  /** The image a container runs (docker only). */
  image: string;
  /** Program and arguments: a path on the host (native) or inside the image (docker). */
  command: readonly string[];
  env: Readonly<Record<string, string>>;
  /** A host directory the worker owns (config, HOME, temp files); mounted at the same path in a container. */
  workDir: string;
  /** Written into workDir before the worker starts. */
  files: ReadonlyArray<Readonly<{ name: string; content: string }>>;
  /** Host directories the worker writes to (recordings), mounted at the same path in a container. */
  mounts: readonly string[];
  limits: WorkerLimits;
  /** The output line that says the worker takes requests. */
  readyMarker: string;
}>;

export type WorkerExitInfo = Readonly<{ code: number | null; signal: string | null; oomKilled: boolean }>;

export type WorkerHandle = Readonly<{
  id: string;
  spec: WorkerSpec;
  enforcedBy: LimitEnforcement;
  startedAt: Date;
  /** Settles when the worker has ended, however it ended. */
  exited: Promise<WorkerExitInfo>;
  /** Every output line (stdout and stderr), from the start. */
  onOutput(listener: (line: string) => void): void;
}>;

/** The one interface both runtimes implement; the supervisor never knows which one it drives. */
export type WorkerDriver = {
  readonly name: 'docker' | 'native';
  start(spec: WorkerSpec): Promise<WorkerHandle>;
  /** SIGTERM (or what the spec's program needs), then SIGKILL after the grace; resolves once it is gone. */
  stop(handle: WorkerHandle, graceMs: number): Promise<void>;
  /** Resident memory of the worker and its children, when the runtime can tell. */
  rssMb(handle: WorkerHandle): Promise<number | null>;
  /** The last lines the worker wrote. */
  logs(handle: WorkerHandle, lines: number): Promise<string>;
  /** Removes workers a previous agent on this host left behind (after a crash of the agent itself). */
  removeOrphans(namePrefix: string): Promise<number>;
  /** Takes over the still running worker a previous agent started under this spec's name, if any. */
  adopt?(spec: WorkerSpec): Promise<WorkerHandle | undefined>;
};

/** `oom`, or `exit <code>` with 128 + n for a worker killed by signal n, as a shell reports it. */
export function exitReason(exit: WorkerExitInfo): string {
  if (exit.oomKilled) return 'oom';
  if (exit.code !== null) return `exit ${exit.code}`;
  const number = exit.signal ? signalNumber(exit.signal) : undefined;
  return number === undefined ? `exit ${exit.signal ?? 'unknown'}` : `exit ${128 + number}`;
}

const SIGNALS: Readonly<Record<string, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};

function signalNumber(signal: string): number | undefined {
  return SIGNALS[signal];
}
