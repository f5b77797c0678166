import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('./stop-signals.ts', import.meta.url));

/** A process that holds stop signals for a while, then installs its own clean-stop handler and releases. */
function starting(holdMs: number) {
  const code = `
    import { holdStopSignals } from ${JSON.stringify(MODULE)};
    const held = holdStopSignals();
    console.log('starting');
    setTimeout(() => {
      process.once('SIGTERM', () => { console.log('stopped cleanly'); process.exit(0); });
      held.release();
      setTimeout(() => { console.log('still running'); process.exit(0); }, 500);
    }, ${holdMs});
  `;
  const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const started = new Promise<void>((resolve) => child.stdout.on('data', () => output.includes('starting') && resolve()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, output })),
  );
  return { child, started, ended };
}

// Each test starts a Node process that compiles TypeScript on load: seconds on a busy host.
describe('holdStopSignals', () => {
  it('keeps a SIGTERM sent while starting from ending the process, and hands it to the shutdown handler once released', async () => {
    const run = starting(1_000);
    await run.started;
    run.child.kill('SIGTERM');
    const ended = await run.ended;
    expect(ended.signal).toBeNull();
    expect(ended.output).toContain('stopped cleanly');
    expect(ended.output).not.toContain('still running');
  }, 60_000);

  it('raises nothing on release when no signal came', async () => {
    const run = starting(100);
    const ended = await run.ended;
    expect(ended.output).toContain('still running');
    expect(ended.output).not.toContain('stopped cleanly');
  }, 60_000);
});
