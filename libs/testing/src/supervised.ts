import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, type WriteStream } from 'node:fs';
import { waitFor } from './ports.js';

export type SupervisedOptions = Readonly<{
  /** For messages: "egress", "ingress". */
  name: string;
  /** Called for every (re)start, so a wrapper command can be rebuilt each time. */
  command: () => readonly [string, readonly string[]];
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: WriteStream;
  logFile: string;
  healthUrl: string;
  /** A line the service logs once it really takes work (its health port opens earlier). */
  readyMarker: string;
  readyTimeoutMs: number;
}>;

export type Supervised = Readonly<{
  readonly process: ChildProcess;
  restarts(): number;
  /** Resolves once the current process answers its health port and has logged the ready marker. */
  ready(): Promise<void>;
  /** Stops the service and everything in its process group; no restart follows. */
  stop(signal: NodeJS.Signals): Promise<void>;
}>;

/**
 * A LiveKit media service (egress, ingress) run as a child in a process group of its own (so stop
 * also reaches the handlers it started) and restarted whenever it exits on its own.
 */
export function supervise(options: SupervisedOptions): Supervised {
  const { log, logFile } = options;
  let current: ChildProcess;
  let currentExited: Promise<void>;
  let logOffset = 0;
  let stopping = false;
  let restarts = 0;
  const start = (): ChildProcess => {
    logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
    const [command, args] = options.command();
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    currentExited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code, signal) => {
      if (stopping) return;
      restarts += 1;
      log.write(`[tally-testing] ${options.name} exited (code ${code}, signal ${signal}); restarting (restart #${restarts})\n`);
      setTimeout(() => {
        if (!stopping) current = start();
      }, 500);
    });
    return child;
  };
  current = start();

  return {
    get process() {
      return current;
    },
    restarts: () => restarts,
    ready: () =>
      waitFor(
        `${options.name} on ${options.healthUrl} (log ${logFile})`,
        async () => {
          if ((await fetch(options.healthUrl)).status !== 200) return undefined;
          return readFileSync(logFile, 'utf8').slice(logOffset).includes(options.readyMarker) ? true : undefined;
        },
        options.readyTimeoutMs,
      ).then(() => undefined),
    async stop(signal) {
      stopping = true;
      await killGroup(current, currentExited, signal);
    },
  };
}

/** The service alone first (it stops its handlers itself, letting them close their files), then whatever it left in its group. */
async function killGroup(child: ChildProcess, exited: Promise<void>, signal: NodeJS.Signals): Promise<void> {
  const group = child.pid;
  if (group === undefined) return;
  const send = (s: NodeJS.Signals) => {
    try {
      process.kill(-group, s);
    } catch {
      // the group is gone
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    child.kill(signal);
    const timer = setTimeout(() => send('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  send('SIGKILL');
}
