import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { NativeDriver } from './native-driver.js';
import type { WorkerSpec } from './worker-driver.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe(`${NativeDriver.name} hand-over`, () => {
  it('a worker outlives the agent that started it, keeps writing output, and the next agent adopts and stops it', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'tally-adopt-state-'));
    const workDir = mkdtempSync(join(tmpdir(), 'tally-adopt-work-'));
    dirs.push(stateDir, workDir);
    const spec: WorkerSpec = {
      kind: 'egress',
      name: `tally-test-adopt-${process.pid}`,
      image: 'unused',
      // Writes a line every 200 ms: through a pipe to an agent that is gone it would die of SIGPIPE.
      command: ['sh', '-c', 'echo service ready; i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done'],
      env: { PATH: '/usr/bin:/bin' },
      workDir,
      files: [],
      mounts: [],
      limits: { memoryMb: 64, cpuMillicores: 500 },
      readyMarker: 'service ready',
    };
    // The first agent: a separate process that starts the worker and exits, as an upgraded agent does.
    const driverModule = resolve(import.meta.dirname, 'native-driver.ts');
    const script = `
      import { NativeDriver } from ${JSON.stringify(driverModule)};
      const spec = JSON.parse(process.argv[1]);
      const worker = await new NativeDriver({ stateDir: ${JSON.stringify(stateDir)} }).start(spec);
      await new Promise((r) => worker.onOutput((l) => l.includes('service ready') && r()));
      console.log(worker.id);
      process.exit(0);`;
    const { stdout } = await run(
      process.execPath,
      ['--import', '@swc-node/register/esm-register', '--input-type=module', '-e', script, JSON.stringify(spec)],
      { timeout: 60_000 },
    );
    const pid = Number(stdout.trim().split('\n').at(-1));
    expect(pid).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(alive(pid)).toBe(true);

    const next = new NativeDriver({ stateDir });
    const adopted = await next.adopt(spec);
    expect(adopted?.id).toBe(String(pid));
    const lines: string[] = [];
    adopted!.onOutput((line) => lines.push(line));
    await expect.poll(() => lines.some((l) => l.startsWith('tick ')), { timeout: 10_000 }).toBe(true);
    expect(adopted!.spec.limits).toEqual({ memoryMb: 64, cpuMillicores: 500 });

    // Nothing else is adopted: another name, or the same name from another directory.
    expect(await next.adopt({ ...spec, name: `${spec.name}-other` })).toBeUndefined();
    expect(await next.adopt({ ...spec, workDir: stateDir })).toBeUndefined();

    await next.stop(adopted!, 5_000);
    await adopted!.exited;
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(stateDir, `${spec.name}.pid`))).toBe(false);
    expect(await new NativeDriver({ stateDir }).adopt(spec)).toBeUndefined();
  }, 90_000);
});
