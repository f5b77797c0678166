import { Injectable } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import type { NodeDrainView } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { PoolSourceAdapter } from '@tally/runtime';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { NodeCredentialsService } from './node-credentials.service.js';
import { ObjectStoreKeys } from './object-store-keys.js';

/**
 * Takes a joined node out of the cluster: its object store account is deleted (docs/adr/0045) and its
 * Redis user (its connections close and its password stops working at once), then it leaves the pool
 * and its operator status is dropped.
 */
@Injectable()
export class NodeRemovalService {
  constructor(
    private readonly registry: NodeRegistry,
    private readonly credentials: NodeCredentialsService,
    private readonly objectStoreKeys: ObjectStoreKeys,
    private readonly pool: PoolSourceAdapter,
    private readonly ledger: CapacityLedger,
  ) {}

  /** The admin's removal: a node in the pool or holding credentials; 404 for neither. */
  async remove(nodeId: string): Promise<void> {
    const known = (await this.credentials.holds(nodeId)) || (await this.registry.get(nodeId)) !== undefined;
    if (!known) throw new NotFoundError('node');
    await this.forget(nodeId);
  }

  /** `install.sh --leave` on the node, first step: no new work for it (authenticated by its own Redis password). */
  async drain(nodeId: string, bearer: string | undefined): Promise<NodeDrainView> {
    await this.authenticate(nodeId, bearer);
    await this.registry.setStatus(nodeId, 'draining');
    this.pool.forget();
    return { running: (await this.ledger.heldOn(nodeId)).map((r) => `${r.kind} ${r.id}`) };
  }

  /** `install.sh --leave` on the node, last step, once nothing runs there. */
  async leave(nodeId: string, bearer: string | undefined): Promise<void> {
    await this.authenticate(nodeId, bearer);
    await this.forget(nodeId);
  }

  private async authenticate(nodeId: string, bearer: string | undefined): Promise<void> {
    if (bearer === undefined || !(await this.credentials.verify(nodeId, bearer)))
      throw new DomainError('unauthorized', "missing or wrong node credential (the node's Redis password)");
  }

  private async forget(nodeId: string): Promise<void> {
    // The store's account first: if its broker cannot be reached nothing has changed yet, and the
    // removal (or the node's --leave, authenticated by its Redis password) can be repeated.
    await this.objectStoreKeys.revoke(nodeId);
    await this.credentials.revoke(nodeId);
    await this.registry.remove(nodeId);
    await this.registry.setStatus(nodeId, 'active');
    this.pool.forget();
  }
}
