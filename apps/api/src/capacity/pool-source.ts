import { Injectable } from '@nestjs/common';
import type { AppQuotaPolicy, NodeBudget } from '@tally/capacity';
import { NodeRegistry, schedulableBudgets, toNodeBudget } from '@tally/nodes';
import type { PoolSource } from '@tally/admission';
import { AppsRepository } from '../apps/apps.repository.js';

/** The pool as admission sees it: live, active nodes from their heartbeats, and every app's policy. */
@Injectable()
export class PoolSourceAdapter implements PoolSource {
  constructor(
    private readonly registry: NodeRegistry,
    private readonly apps: AppsRepository,
  ) {}

  async liveNodes(): Promise<NodeBudget[]> {
    return (await this.registry.list()).map(toNodeBudget);
  }

  async schedulableNodes(): Promise<NodeBudget[]> {
    return schedulableBudgets(await this.registry.list());
  }

  appPolicies(): Promise<AppQuotaPolicy[]> {
    return this.apps.policies();
  }

  appPolicy(appId: string): Promise<AppQuotaPolicy | undefined> {
    return this.apps.policy(appId);
  }
}
