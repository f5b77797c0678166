import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';

export type Child = Readonly<{ process: ChildProcess; stop(signal?: NodeJS.Signals): Promise<void> }>;

/** Spawns a long-running service with its output in a log file; stop() waits for it to exit. */
export function startChild(command: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): Child {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      log.end();
    },
  };
}
