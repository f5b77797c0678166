import { Injectable } from '@nestjs/common';
import type { AppQuotaPolicy, NodeBudget } from '@tally/capacity';
import type { NodeView } from '@tally/contracts';
import { NodeRegistry, schedulableBudgets, toNodeBudget } from '@tally/nodes';
import type { PoolSource } from '@tally/admission';
import { AppsRepository } from '../apps/apps.repository.js';

/** The pool as admission sees it: live, active nodes from their heartbeats, and every app's policy. */
@Injectable()
export class PoolSourceAdapter implements PoolSource {
  /** The read of the node registry in flight, if any. */
  private reading: Promise<NodeView[]> | undefined;

  constructor(
    private readonly registry: NodeRegistry,
    private readonly apps: AppsRepository,
  ) {}

  async liveNodes(): Promise<NodeBudget[]> {
    return (await this.nodes()).map(toNodeBudget);
  }

  async schedulableNodes(): Promise<NodeBudget[]> {
    return schedulableBudgets(await this.nodes());
  }

  /**
   * Every admission reads the whole pool. Requests that arrive while a read is in flight share it
   * instead of starting their own (two sequential Redis round trips and a schema check per node):
   * what they get was read at most one round trip before they arrived, as if they had come first.
   */
  private nodes(): Promise<NodeView[]> {
    if (this.reading) return this.reading;
    const reading = this.registry.list().finally(() => {
      if (this.reading === reading) this.reading = undefined;
    });
    this.reading = reading;
    return reading;
  }

  appPolicies(): Promise<AppQuotaPolicy[]> {
    return this.apps.policies();
  }

  appPolicy(appId: string): Promise<AppQuotaPolicy | undefined> {
    return this.apps.policy(appId);
  }
}
