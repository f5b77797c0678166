import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { waitFor } from './ports.js';

export type BusyHost = Readonly<{
  /** The idle share of all CPUs (0..1) over the last sample, as /proc/stat counts it. */
  idleShare(): Promise<number>;
  stop(): Promise<void>;
}>;

/**
 * Makes the whole host look busy to anything that reads /proc/stat, as a loaded machine does: one
 * busy loop per CPU at nice 19. Niced time is not idle time, so measured idle drops to about 0,
 * while every other process keeps almost all of the CPU it asks for (nice 19 weighs 15 against 1024).
 * Resolves once a sample shows less than 5 % idle.
 */
export async function busyHost(): Promise<BusyHost> {
  const loops: ChildProcess[] = Array.from({ length: availableParallelism() }, () =>
    spawn('nice', ['-n', '19', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' }),
  );
  const stop = async () => {
    await Promise.all(
      loops.map((loop) => {
        if (loop.exitCode !== null || loop.signalCode !== null) return Promise.resolve();
        const exited = new Promise((resolve) => loop.once('exit', resolve));
        loop.kill('SIGKILL');
        return exited;
      }),
    );
  };
  try {
    await waitFor('the host to measure busy', async () => ((await idleShare()) < 0.05 ? true : undefined), 15_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { idleShare, stop };
}

/** Idle (idle + iowait) over total CPU time across a 500 ms window. */
async function idleShare(): Promise<number> {
  const before = cpuTimes();
  await new Promise((r) => setTimeout(r, 500));
  const after = cpuTimes();
  const total = after.total - before.total;
  return total <= 0 ? 1 : (after.idle - before.idle) / total;
}

function cpuTimes(): { idle: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user/nice)
  const used = fields.slice(0, 8);
  return { idle: (used[3] ?? 0) + (used[4] ?? 0), total: used.reduce((a, b) => a + b, 0) };
}
