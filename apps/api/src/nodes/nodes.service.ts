import { Injectable } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { diskStates, diskUsageOf } from '@tally/capacity';
import type { NodeList, NodeView, UpdateNodeBody, WorkerList } from '@tally/contracts';
import { NodeRegistry, NodeWorkers, toNodeBudget } from '@tally/nodes';
import { PoolSourceAdapter } from '@tally/runtime';
import { toDiskView } from '../capacity/disk-view.js';
import { Clock } from '../common/clock.js';
import { NotFoundError } from '../common/domain-error.js';

@Injectable()
export class NodesService {
  constructor(
    private readonly registry: NodeRegistry,
    private readonly ledger: CapacityLedger,
    private readonly workers: NodeWorkers,
    private readonly clock: Clock,
    private readonly pool: PoolSourceAdapter,
    private readonly admitter: Admitter,
  ) {}

  /** What the node's agent last reported; a node whose agent runs no workers itself reports runtime `none`. */
  async workersOf(nodeId: string): Promise<WorkerList> {
    if (!(await this.registry.get(nodeId))) throw new NotFoundError('node');
    return (
      (await this.workers.list(nodeId)) ?? { nodeId, runtime: 'none', items: [], exits: {}, reportedAt: this.clock.now().toISOString() }
    );
  }

  async list(): Promise<NodeList> {
    const nodes = await this.registry.list();
    const usage = await this.ledger.usage(
      nodes.map((n) => n.nodeId),
      [],
    );
    const reservedMb = (key: string) => diskUsageOf(usage, key);
    return {
      items: nodes.map((n) => ({
        ...n,
        reserved: usage.nodes[n.nodeId]?.load ?? { ramMb: 0, cpuMillicores: 0, nicKbps: 0 },
        disks: diskStates(toNodeBudget(n).disks, this.admitter.model.disk, reservedMb).map(toDiskView),
      })),
    };
  }

  /** Draining and disabled nodes keep what runs on them but take no new work. */
  async setStatus(nodeId: string, body: UpdateNodeBody): Promise<NodeView> {
    if (!(await this.registry.get(nodeId))) throw new NotFoundError('node');
    await this.registry.setStatus(nodeId, body.status);
    this.pool.forget();
    const node = await this.registry.get(nodeId);
    if (!node) throw new NotFoundError('node');
    return node;
  }
}
