import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDockerd, type TestDockerd } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerDriver } from './docker-driver.js';
import { NativeDriver } from './native-driver.js';
import { exitReason, type WorkerDriver, type WorkerSpec } from './worker-driver.js';

const IMAGE = 'tally-test/busybox:1';

/** The same behaviour, asserted against both runtimes: what the supervisor relies on. */
type DriverSetup = Readonly<{ name: string; driver: () => WorkerDriver; memoryLimitOf: (id: string, name: string) => Promise<number> }>;

let dockerd: TestDockerd | undefined;
const dirs: string[] = [];
const workDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-driver-'));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  dockerd = await startDockerd();
  await dockerd.importBusybox(IMAGE);
}, 120_000);

afterAll(async () => {
  await dockerd?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const setups: DriverSetup[] = [
  {
    name: 'native',
    driver: () => new NativeDriver({ stateDir: workDir() }),
    memoryLimitOf: (_id, name) => {
      const v2 = `/sys/fs/cgroup/tally-workers/${name}/memory.max`;
      const v1 = `/sys/fs/cgroup/memory/tally-workers/${name}/memory.limit_in_bytes`;
      return Promise.resolve(Number(readFileSync(existsSync(v2) ? v2 : v1, 'utf8')));
    },
  },
  {
    name: 'docker',
    driver: () => new DockerDriver({ socketPath: dockerd!.socketPath }),
    memoryLimitOf: async (_id, name) => (await dockerd!.docker.getContainer(name).inspect()).HostConfig.Memory ?? 0,
  },
];

function spec(name: string, script: string, limits = { memoryMb: 64, cpuMillicores: 500 }): WorkerSpec {
  const dir = workDir();
  return {
    kind: 'egress',
    name: `tally-test-${name}-${process.pid}`,
    image: IMAGE,
    command: ['sh', '-c', script],
    env: { PATH: '/usr/bin:/bin' },
    workDir: dir,
    files: [{ name: 'worker.yaml', content: 'answer: 42\n' }],
    mounts: [],
    limits,
    readyMarker: 'service ready',
  };
}

describe.each(setups)('$name driver', (setup) => {
  it('starts a worker with its files and limits, streams its output, and stops it', async () => {
    const driver = setup.driver();
    const worker = await driver.start(spec(`run-${setup.name}`, 'cat worker.yaml; echo service ready; exec sleep 600'));
    const lines: string[] = [];
    worker.onOutput((line) => lines.push(line));
    await expect.poll(() => lines, { timeout: 20_000 }).toContain('service ready');
    expect(lines).toContain('answer: 42');
    expect(await setup.memoryLimitOf(worker.id, worker.spec.name)).toBe(64 * 1024 * 1024);
    expect(worker.enforcedBy).toMatch(/docker|cgroup/);
    expect(await driver.rssMb(worker)).toBeGreaterThanOrEqual(0);
    expect(await driver.logs(worker, 5)).toContain('service ready');

    await driver.stop(worker, 5_000);
    const exit = await worker.exited;
    expect(exit.oomKilled).toBe(false);
  }, 60_000);

  it('reports a worker killed at its memory limit as oom', async () => {
    const driver = setup.driver();
    // tail keeps the endless line of /dev/zero in memory until the kernel's OOM killer stops it.
    const worker = await driver.start(
      spec(`oom-${setup.name}`, 'echo service ready; tail /dev/zero', { memoryMb: 48, cpuMillicores: 1000 }),
    );
    const exit = await worker.exited;
    expect(exit.oomKilled).toBe(true);
    expect(exitReason(exit)).toBe('oom');
  }, 60_000);

  it('reports a crash with its exit code', async () => {
    const driver = setup.driver();
    const worker = await driver.start(spec(`crash-${setup.name}`, 'echo service ready; sleep 1; exit 3'));
    expect(exitReason(await worker.exited)).toBe('exit 3');
  }, 60_000);

  it('removes the workers a previous agent left running', async () => {
    const first = setup.driver();
    const s = spec(`orphan-${setup.name}`, 'echo service ready; exec sleep 600');
    const worker = await first.start(s);
    const lines: string[] = [];
    worker.onOutput((l) => lines.push(l));
    await expect.poll(() => lines, { timeout: 20_000 }).toContain('service ready');
    const removed = await (
      setup.name === 'native' ? new NativeDriver({ stateDir: (first as NativeDriver).stateDir }) : setup.driver()
    ).removeOrphans('tally-test-orphan');
    expect(removed).toBe(1);
    await worker.exited;
    expect(await setup.driver().removeOrphans('tally-test-orphan')).toBe(0);
  }, 60_000);
});
