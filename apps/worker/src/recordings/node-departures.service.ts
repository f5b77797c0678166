import { Injectable, Logger } from '@nestjs/common';
import { RecordingLifecycle } from '@tally/recordings';
import { NodeAbsence } from '../reconcile/node-absence.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';

/** A recording younger than this was placed from a pool listing that may be a moment old: it is not judged. */
const SETTLE_MS = 30_000;

export type NodeDeparturesReport = Readonly<{ recordingsFailedNodeGone: number }>;

/**
 * A node whose heartbeat expired is gone, and so is every recording its egress was writing: each
 * open recording placed on it fails with that reason, which releases its reservation and sends
 * `recording.failed`. Only absence from the pool counts; a draining or disabled node still runs
 * what it has; and not in the moments after a Redis failover, when heartbeats may not be back yet.
 */
@Injectable()
export class NodeDepartures {
  private readonly logger = new Logger(NodeDepartures.name);

  constructor(
    private readonly rows: RecordingRowsRepository,
    private readonly absence: NodeAbsence,
    private readonly lifecycle: RecordingLifecycle,
  ) {}

  async run(now: Date): Promise<NodeDeparturesReport> {
    const open = await this.rows.openCreatedBefore(new Date(now.getTime() - SETTLE_MS));
    if (open.length === 0) return { recordingsFailedNodeGone: 0 };
    const pool = await this.absence.pool();
    if (!pool.absenceMeansGone) return { recordingsFailedNodeGone: 0 };
    const gone = new Set<string>();
    for (const nodeId of new Set(open.map((r) => r.nodeId))) {
      if (!pool.live.has(nodeId) && !(await this.absence.beating(nodeId))) gone.add(nodeId);
    }
    let failed = 0;
    for (const { id, nodeId } of open) {
      if (gone.has(nodeId) && (await this.lifecycle.fail(id, `node ${nodeId} left the pool`, now))) failed += 1;
    }
    if (failed > 0) this.logger.warn(`${failed} recording(s) failed on nodes that left the pool: ${[...gone].join(', ')}`);
    return { recordingsFailedNodeGone: failed };
  }
}
