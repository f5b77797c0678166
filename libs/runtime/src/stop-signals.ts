const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export type HeldStopSignals = { release(): void };

/**
 * Holds the stop signals that arrive while a Nest application context starts. Nest runs every
 * bootstrap hook inside `createApplicationContext` (where work such as webhook deliveries begins)
 * and only then can its shutdown hooks be enabled; a SIGTERM in between would end the process in
 * the middle of that work. `release()` is called once the hooks are enabled: it stops holding and
 * raises the first held signal again, so the process shuts down cleanly through them.
 */
export function holdStopSignals(): HeldStopSignals {
  let held: NodeJS.Signals | undefined;
  const hold = (signal: NodeJS.Signals): void => {
    held ??= signal;
  };
  for (const signal of STOP_SIGNALS) process.on(signal, hold);
  return {
    release(): void {
      for (const signal of STOP_SIGNALS) process.off(signal, hold);
      if (held !== undefined) process.kill(process.pid, held);
    },
  };
}
