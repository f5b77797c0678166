import type { WorkerExit, WorkerExitReport, WorkerKind, WorkerList, WorkerRuntimeName, WorkerView } from '@tally/contracts';
import { settledWithin } from './settled-within.js';
import { exitReason, type WorkerDriver, type WorkerHandle, type WorkerSpec } from './worker-driver.js';

/** Whether a kind of worker has work on this node, and whether someone is about to dispatch some. */
export type WorkSource = Readonly<{
  activeWork(kind: WorkerKind): Promise<number>;
  demanded(kind: WorkerKind): Promise<boolean>;
}>;

export type SupervisorOptions = Readonly<{
  nodeId: string;
  driver: WorkerDriver;
  kinds: readonly WorkerKind[];
  /** Built fresh for each start, so a new budget or profile applies to the next worker. */
  spec(kind: WorkerKind): Promise<WorkerSpec>;
  work: WorkSource;
  /** How long a worker with nothing to do keeps running (its warm pool is reused meanwhile). */
  idleGraceMs: number;
  /** A worker that has not said it is ready by then is stopped and counted as a failed start. */
  startTimeoutMs: number;
  stopGraceMs: number;
  /** How long a stop waits for a pass or a report held up by Redis before it goes on without it (3 s). */
  stopWaitMs?: number;
  report(list: WorkerList): Promise<void>;
  /** A worker ended without being asked to: what ran on it must be failed by the control plane. */
  onUnexpectedExit(report: WorkerExitReport): Promise<void>;
  now?: () => Date;
  log?: (line: string) => void;
}>;

type Slot = {
  handle: WorkerHandle | undefined;
  state: 'starting' | 'ready' | 'stopping';
  readyAt: number | undefined;
  idleSince: number | undefined;
  restarts: number;
  /** Unexpected exits in a row; each doubles the wait before the next start (1 s … 60 s). */
  crashes: number;
  notBefore: number;
  lastExit: WorkerExit | undefined;
  expectedStop: boolean;
};

const MAX_BACKOFF_MS = 60_000;
const STOP_WAIT_MS = 3_000;

/**
 * Keeps the node's media workers matched to its work: a worker starts when work or a demand
 * appears, stops after the idle grace once neither remains, and is restarted after an exit it did
 * not ask for while work remains. Every tick reports the workers to Redis.
 */
export class WorkerSupervisor {
  private readonly slots = new Map<WorkerKind, Slot>();
  private readonly now: () => Date;
  private readonly log: (line: string) => void;
  private ticking: Promise<void> = Promise.resolve();
  private released = false;
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {
    this.now = options.now ?? (() => new Date());
    this.log = options.log ?? ((line) => console.log(line));
    for (const kind of options.kinds) {
      this.slots.set(kind, {
        handle: undefined,
        state: 'starting',
        readyAt: undefined,
        idleSince: undefined,
        restarts: 0,
        crashes: 0,
        notBefore: 0,
        lastExit: undefined,
        expectedStop: false,
      });
    }
  }

  /** One pass over every kind; passes never overlap (a call during a pass runs after it). */
  tick(): Promise<void> {
    this.ticking = this.ticking.then(() => this.pass()).catch((error: unknown) => this.log(`workers: ${String(error)}`));
    return this.ticking;
  }

  /** Stops supervising without stopping anything: the workers go on for the next agent to adopt. */
  async release(): Promise<void> {
    this.released = true;
    await this.ticking;
  }

  /**
   * Stops every worker (agent shutdown); they are not restarted. Stopping needs only this host: a
   * pass or a report held up by an unreachable Redis is waited for a few seconds at most, so the
   * workers never outlive the agent.
   */
  async stopAll(): Promise<void> {
    this.stopping = true;
    await settledWithin(this.ticking, this.options.stopWaitMs ?? STOP_WAIT_MS);
    await Promise.all([...this.slots.values()].map((slot) => this.stopSlot(slot)));
    await settledWithin(this.report(), this.options.stopWaitMs ?? STOP_WAIT_MS).catch((error: unknown) =>
      this.log(`could not report the stopped workers: ${String(error)}`),
    );
  }

  async list(): Promise<WorkerList> {
    const at = this.now();
    const items: WorkerView[] = [];
    const exits: WorkerList['exits'] = {};
    for (const [kind, slot] of this.slots) {
      if (slot.lastExit) exits[kind] = slot.lastExit;
      const handle = slot.handle;
      if (!handle) continue;
      const since = slot.readyAt ?? handle.startedAt.getTime();
      items.push({
        kind,
        runtime: this.options.driver.name,
        id: handle.id,
        state: slot.state,
        limits: { ...handle.spec.limits, enforcedBy: handle.enforcedBy },
        rssMb: await this.options.driver.rssMb(handle),
        startedAt: handle.startedAt.toISOString(),
        uptimeS: Math.max(0, Math.floor((at.getTime() - since) / 1000)),
        restarts: slot.restarts,
        lastExit: slot.lastExit ?? null,
        idleStopAt: slot.idleSince === undefined ? null : new Date(slot.idleSince + this.options.idleGraceMs).toISOString(),
      });
    }
    return {
      nodeId: this.options.nodeId,
      runtime: this.options.driver.name satisfies WorkerRuntimeName,
      items,
      exits,
      reportedAt: at.toISOString(),
    };
  }

  private async pass(): Promise<void> {
    if (this.released || this.stopping) return;
    const at = this.now().getTime();
    for (const [kind, slot] of this.slots) {
      if (this.stopping) return;
      const needed = (await this.options.work.activeWork(kind)) > 0 || (await this.options.work.demanded(kind));
      if (needed) {
        slot.idleSince = undefined;
        if (!slot.handle && at >= slot.notBefore) await this.start(kind, slot);
      } else if (slot.handle && slot.state === 'ready') {
        slot.idleSince ??= at;
        if (at - slot.idleSince >= this.options.idleGraceMs) {
          this.log(`${kind} worker ${slot.handle.id}: idle for ${Math.round(this.options.idleGraceMs / 1000)} s, stopping`);
          await this.stopSlot(slot);
        }
      }
      if (slot.handle && slot.state === 'starting' && at - slot.handle.startedAt.getTime() > this.options.startTimeoutMs) {
        this.log(`${kind} worker ${slot.handle.id}: not ready after ${this.options.startTimeoutMs} ms, stopping`);
        const logs = await this.options.driver.logs(slot.handle, 20);
        await this.stopSlot(slot);
        slot.lastExit = { reason: 'start timeout', at: this.now().toISOString() };
        this.backOff(slot);
        if (logs !== '') this.log(logs);
      }
    }
    await this.report();
  }

  private async start(kind: WorkerKind, slot: Slot): Promise<void> {
    const spec = await this.options.spec(kind);
    if (this.stopping) return;
    let handle: WorkerHandle;
    try {
      handle = await this.options.driver.start(spec);
    } catch (error) {
      slot.lastExit = { reason: `start failed: ${error instanceof Error ? error.message : String(error)}`, at: this.now().toISOString() };
      this.backOff(slot);
      this.log(`${kind} worker could not start: ${slot.lastExit.reason}`);
      return;
    }
    Object.assign(slot, { handle, state: 'starting', readyAt: undefined, idleSince: undefined, expectedStop: false });
    if (this.stopping) {
      await this.stopSlot(slot);
      return;
    }
    this.log(
      `${kind} worker ${handle.id} started (${this.options.driver.name}, ${spec.limits.memoryMb} MB, ${spec.limits.cpuMillicores} mCPU, ${handle.enforcedBy})`,
    );
    this.track(kind, slot, handle, spec);
  }

  /** Supervises a worker a previous agent started and handed over (it is ready: it was running). */
  adopt(kind: WorkerKind, handle: WorkerHandle): void {
    const slot = this.slots.get(kind);
    if (!slot || slot.handle) throw new Error(`cannot adopt a ${kind} worker here`);
    Object.assign(slot, { handle, state: 'ready', readyAt: this.now().getTime(), idleSince: undefined, expectedStop: false });
    this.log(`${kind} worker ${handle.id} adopted from the previous agent (${this.options.driver.name}, ${handle.enforcedBy})`);
    this.track(kind, slot, handle, handle.spec);
  }

  private track(kind: WorkerKind, slot: Slot, handle: WorkerHandle, spec: WorkerSpec): void {
    handle.onOutput((line) => {
      if (slot.handle === handle && slot.state === 'starting' && line.includes(spec.readyMarker)) {
        slot.state = 'ready';
        slot.readyAt = this.now().getTime();
        slot.crashes = 0;
        this.log(`${kind} worker ${handle.id} ready after ${slot.readyAt - handle.startedAt.getTime()} ms`);
        void this.tick();
      }
    });
    void handle.exited.then((exit) => this.exited(kind, slot, handle, exitReason(exit)));
  }

  private async exited(kind: WorkerKind, slot: Slot, handle: WorkerHandle, reason: string): Promise<void> {
    if (slot.handle !== handle || this.released) return;
    const expected = slot.expectedStop;
    slot.handle = undefined;
    slot.readyAt = undefined;
    slot.idleSince = undefined;
    if (expected) return;
    const at = this.now().toISOString();
    slot.lastExit = { reason, at };
    slot.restarts++;
    this.backOff(slot);
    this.log(`${kind} worker ${handle.id} ended on its own: ${reason}`);
    try {
      await this.options.onUnexpectedExit({ nodeId: this.options.nodeId, kind, workerId: handle.id, reason, at });
    } catch (error) {
      this.log(`could not report the ${kind} worker's exit: ${String(error)}`);
    }
    await this.tick();
  }

  private backOff(slot: Slot): void {
    slot.crashes++;
    slot.notBefore = this.now().getTime() + Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** (slot.crashes - 1));
  }

  private async stopSlot(slot: Slot): Promise<void> {
    const handle = slot.handle;
    if (!handle) return;
    slot.expectedStop = true;
    slot.state = 'stopping';
    await this.options.driver.stop(handle, this.options.stopGraceMs);
    if (slot.handle === handle) slot.handle = undefined;
  }

  private async report(): Promise<void> {
    await this.options.report(await this.list());
  }
}
