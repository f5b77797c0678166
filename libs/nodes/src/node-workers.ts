import { WorkerList, type WorkerKind } from '@tally/contracts';
import type { Redis } from 'ioredis';

export const WORKER_KEYS = {
  /** The agent's latest WorkerList for its node, rewritten with a TTL on every report. */
  list: (nodeId: string) => `tally:{nodes}:workers:${nodeId}`,
  /** Set by whoever is about to dispatch work to a kind of worker on the node; read by its agent. */
  demand: (nodeId: string, kind: WorkerKind) => `tally:{nodes}:demand:${nodeId}:${kind}`,
  /** Long-lived work a kind of worker serves on the node (ingress ids), for kinds the ledger does not count. */
  work: (nodeId: string, kind: WorkerKind) => `tally:{nodes}:work:${nodeId}:${kind}`,
  /** Published to after a demand is set, so the agent acts at once instead of at its next tick. */
  wake: (nodeId: string) => `tally:{nodes}:wake:${nodeId}`,
} as const;

export class WorkerNotReadyError extends Error {}

export type AwaitReadyOptions = Readonly<{ timeoutMs: number; pollMs?: number }>;

/**
 * Where agents report the media workers they run and where the control plane asks for one. A
 * node whose agent runs no workers itself (`runtime: none`, or an agent of another version) never
 * reports a list; work for it is dispatched without waiting.
 */
export class NodeWorkers {
  constructor(private readonly redis: Redis) {}

  async report(list: WorkerList, ttlS: number): Promise<void> {
    await this.redis.set(WORKER_KEYS.list(list.nodeId), JSON.stringify(WorkerList.parse(list)), 'EX', ttlS);
  }

  /** The node's report, when it is one about that node (its key is the node's own to write). */
  async list(nodeId: string): Promise<WorkerList | undefined> {
    const raw = await this.redis.get(WORKER_KEYS.list(nodeId));
    if (raw === null) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return undefined;
    }
    const parsed = WorkerList.safeParse(json);
    return parsed.success && parsed.data.nodeId === nodeId ? parsed.data : undefined;
  }

  async clear(nodeId: string): Promise<void> {
    await this.redis.del(WORKER_KEYS.list(nodeId));
  }

  /** Asks the node's agent to have a worker of the kind running for at least `holdS` seconds. */
  async demand(nodeId: string, kind: WorkerKind, holdS: number): Promise<void> {
    await this.redis.set(WORKER_KEYS.demand(nodeId, kind), String(Date.now()), 'EX', holdS);
    await this.redis.publish(WORKER_KEYS.wake(nodeId), kind);
  }

  /** Records long-lived work (an ingress) on the node, so its agent keeps that kind of worker running. */
  async retain(nodeId: string, kind: WorkerKind, workId: string): Promise<void> {
    await this.redis.sadd(WORKER_KEYS.work(nodeId, kind), workId);
    await this.redis.publish(WORKER_KEYS.wake(nodeId), kind);
  }

  /** Writes back work Redis lost (the sweep, from Postgres' rows); returns how many were missing. */
  async retainAll(work: readonly Readonly<{ nodeId: string; kind: WorkerKind; workId: string }>[]): Promise<number> {
    let added = 0;
    for (const { nodeId, kind, workId } of work) {
      if ((await this.redis.sadd(WORKER_KEYS.work(nodeId, kind), workId)) === 0) continue;
      added += 1;
      await this.redis.publish(WORKER_KEYS.wake(nodeId), kind);
    }
    return added;
  }

  async dropWork(nodeId: string, kind: WorkerKind, workId: string): Promise<void> {
    await this.redis.srem(WORKER_KEYS.work(nodeId, kind), workId);
  }

  async retained(nodeId: string, kind: WorkerKind): Promise<number> {
    return this.redis.scard(WORKER_KEYS.work(nodeId, kind));
  }

  async demanded(nodeId: string, kind: WorkerKind): Promise<boolean> {
    return (await this.redis.exists(WORKER_KEYS.demand(nodeId, kind))) === 1;
  }

  /**
   * Demands a worker and resolves once the agent reports it ready. Resolves at once when the
   * node's agent manages no workers; rejects with WorkerNotReadyError after the timeout.
   */
  async ensureReady(nodeId: string, kind: WorkerKind, options: AwaitReadyOptions): Promise<void> {
    const deadline = Date.now() + options.timeoutMs;
    const pollMs = options.pollMs ?? 200;
    await this.demand(nodeId, kind, Math.ceil(options.timeoutMs / 1000));
    for (;;) {
      const list = await this.list(nodeId);
      if (!list || list.runtime === 'none' || isReady(list, kind)) {
        // The dispatcher's own work (a reservation, a retained ingress) keeps the worker from here on.
        await this.redis.del(WORKER_KEYS.demand(nodeId, kind));
        return;
      }
      if (Date.now() >= deadline) {
        const last = list.exits[kind];
        throw new WorkerNotReadyError(
          `no ${kind} worker became ready on node ${nodeId} within ${options.timeoutMs} ms${last ? ` (last exit: ${last.reason})` : ''}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}

function isReady(list: WorkerList, kind: WorkerKind): boolean {
  return list.items.some((w) => w.kind === kind && w.state === 'ready');
}
