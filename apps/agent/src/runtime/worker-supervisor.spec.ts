import type { WorkerExitReport, WorkerKind, WorkerList } from '@tally/contracts';
import { describe, expect, it } from 'vitest';
import { OutputLog } from './output-log.js';
import type { WorkerDriver, WorkerExitInfo, WorkerHandle, WorkerSpec } from './worker-driver.js';
import { WorkerSupervisor } from './worker-supervisor.js';

/** A driver whose workers are plain objects the test ends by hand. */
class FakeDriver implements WorkerDriver {
  readonly name = 'native';
  readonly started: Array<{ handle: WorkerHandle; output: OutputLog; end(exit: WorkerExitInfo): void }> = [];
  stopped = 0;

  start(spec: WorkerSpec): Promise<WorkerHandle> {
    const output = new OutputLog(undefined);
    let end!: (exit: WorkerExitInfo) => void;
    const exited = new Promise<WorkerExitInfo>((resolve) => (end = resolve));
    const handle: WorkerHandle = {
      id: `w${this.started.length + 1}`,
      spec,
      enforcedBy: 'cgroup1',
      startedAt: new Date(clock.at),
      exited,
      onOutput: (l) => output.subscribe(l),
    };
    this.started.push({ handle, output, end });
    return Promise.resolve(handle);
  }
  async stop(handle: WorkerHandle): Promise<void> {
    this.stopped++;
    this.started.find((s) => s.handle === handle)?.end({ code: 0, signal: null, oomKilled: false });
    await handle.exited;
  }
  rssMb = () => Promise.resolve(42);
  logs = () => Promise.resolve('');
  removeOrphans = () => Promise.resolve(0);
}

const clock = { at: Date.parse('2026-01-01T00:00:00Z') };

/** What Redis answers; while `reachable` is false every call waits for good, as on an unreachable Redis. */
type Work = { active: number; demanded: boolean; reachable?: boolean };
const never = new Promise<never>(() => undefined);

function setUp(work: Work) {
  const redis = <T>(value: () => T): Promise<T> => (work.reachable === false ? never : Promise.resolve(value()));
  const driver = new FakeDriver();
  const reports: WorkerList[] = [];
  const exits: WorkerExitReport[] = [];
  const supervisor = new WorkerSupervisor({
    nodeId: 'n1',
    driver,
    kinds: ['egress'],
    spec: (kind: WorkerKind) =>
      Promise.resolve({
        kind,
        name: `tally-${kind}`,
        image: 'img',
        command: ['egress'],
        env: {},
        workDir: '/tmp/x',
        files: [],
        mounts: [],
        limits: { memoryMb: 1000, cpuMillicores: 2000 },
        readyMarker: 'service ready',
      }),
    work: { activeWork: () => redis(() => work.active), demanded: () => redis(() => work.demanded) },
    idleGraceMs: 300_000,
    startTimeoutMs: 60_000,
    stopGraceMs: 1_000,
    stopWaitMs: 50,
    report: (list) => redis(() => void reports.push(list)),
    onUnexpectedExit: (report) => {
      exits.push(report);
      return Promise.resolve();
    },
    now: () => new Date(clock.at),
    log: () => undefined,
  });
  return { driver, reports, exits, supervisor, last: () => reports.at(-1)! };
}

describe(WorkerSupervisor.name, () => {
  it('runs no worker while nothing needs one', async () => {
    const { driver, supervisor, last } = setUp({ active: 0, demanded: false });
    await supervisor.tick();
    expect(driver.started).toHaveLength(0);
    expect(last().items).toEqual([]);
  });

  it('starts on demand, is ready on its marker, and stops only after the idle grace', async () => {
    const work = { active: 0, demanded: true };
    const { driver, supervisor, last } = setUp(work);
    await supervisor.tick();
    expect(driver.started).toHaveLength(1);
    expect(last().items[0]).toMatchObject({
      kind: 'egress',
      state: 'starting',
      limits: { memoryMb: 1000, cpuMillicores: 2000, enforcedBy: 'cgroup1' },
    });
    driver.started[0]!.output.push('2026 INFO egress service ready');
    await supervisor.tick();
    expect(last().items[0]).toMatchObject({ state: 'ready', rssMb: 42, idleStopAt: null });

    work.demanded = false;
    await supervisor.tick();
    expect(last().items[0]?.idleStopAt).toBe(new Date(clock.at + 300_000).toISOString());
    clock.at += 299_000;
    await supervisor.tick();
    expect(driver.stopped).toBe(0);
    clock.at += 1_000;
    await supervisor.tick();
    expect(driver.stopped).toBe(1);
    expect(last().items).toEqual([]);
  });

  it('keeps the worker while work runs, whatever the grace', async () => {
    const { driver, supervisor } = setUp({ active: 2, demanded: false });
    await supervisor.tick();
    driver.started[0]!.output.push('service ready');
    clock.at += 3_600_000;
    await supervisor.tick();
    expect(driver.stopped).toBe(0);
  });

  it('reports an exit it did not ask for and restarts after a back-off while work remains', async () => {
    const { driver, supervisor, exits, last } = setUp({ active: 1, demanded: false });
    await supervisor.tick();
    driver.started[0]!.output.push('service ready');
    driver.started[0]!.end({ code: null, signal: 'SIGKILL', oomKilled: true });
    await new Promise((r) => setTimeout(r, 10));
    expect(exits).toEqual([{ nodeId: 'n1', kind: 'egress', workerId: 'w1', reason: 'oom', at: new Date(clock.at).toISOString() }]);
    expect(last().exits.egress?.reason).toBe('oom');
    expect(driver.started).toHaveLength(1);
    clock.at += 1_000;
    await supervisor.tick();
    expect(driver.started).toHaveLength(2);
    expect(last().items[0]).toMatchObject({ id: 'w2', restarts: 1, lastExit: { reason: 'oom' } });
  });

  it('does not report a stop it asked for', async () => {
    const { driver, supervisor, exits } = setUp({ active: 1, demanded: false });
    await supervisor.tick();
    await supervisor.stopAll();
    expect(driver.stopped).toBe(1);
    expect(exits).toEqual([]);
  });

  it('supervises an adopted worker as a ready one: no second start while work runs, stopped once idle', async () => {
    const work = { active: 1, demanded: false };
    const { driver, supervisor, last } = setUp(work);
    // What a previous agent started (the driver adopts it from there).
    const handle = await driver.start(await driverSpec());
    supervisor.adopt('egress', handle);
    await supervisor.tick();
    expect(driver.started).toHaveLength(1);
    expect(last().items[0]).toMatchObject({ id: 'w1', state: 'ready' });
    work.active = 0;
    await supervisor.tick();
    clock.at += 300_000;
    await supervisor.tick();
    expect(driver.stopped).toBe(1);
    expect(last().items).toEqual([]);
  });

  it('leaves the workers running when released for the next agent', async () => {
    const { driver, supervisor, exits } = setUp({ active: 1, demanded: false });
    await supervisor.tick();
    await supervisor.release();
    clock.at += 3_600_000;
    await supervisor.tick();
    driver.started[0]!.end({ code: 0, signal: null, oomKilled: false });
    await new Promise((r) => setTimeout(r, 10));
    expect(driver.stopped).toBe(0);
    expect(driver.started).toHaveLength(1);
    expect(exits).toEqual([]);
  });

  it('stops its workers on shutdown while Redis is unreachable, and starts none afterwards', async () => {
    const work: Work = { active: 1, demanded: false };
    const { driver, supervisor } = setUp(work);
    await supervisor.tick();
    driver.started[0]!.output.push('service ready');
    await supervisor.tick();
    work.reachable = false;
    void supervisor.tick(); // a pass that waits on Redis for good
    await supervisor.stopAll();
    expect(driver.stopped).toBe(1);

    work.reachable = true;
    await supervisor.tick();
    expect(driver.started).toHaveLength(1);
  });
});

function driverSpec(): Promise<WorkerSpec> {
  return Promise.resolve({
    kind: 'egress',
    name: 'tally-egress',
    image: 'img',
    command: ['egress'],
    env: {},
    workDir: '/tmp/x',
    files: [],
    mounts: [],
    limits: { memoryMb: 1000, cpuMillicores: 2000 },
    readyMarker: 'service ready',
  });
}
