import { Injectable } from '@nestjs/common';
import type { AppQuotaPolicy, NodeBudget } from '@tally/capacity';
import type { NodeView } from '@tally/contracts';
import { NodeRegistry, schedulableBudgets, toNodeBudget } from '@tally/nodes';
import type { PoolRead, PoolSource } from '@tally/admission';
import { AppPoliciesRepository } from './app-policies.repository.js';

/**
 * How long admissions share one read of the node registry. Nodes change at heartbeat pace (a node
 * that stops beating stays listed for its heartbeat's TTL, seconds); refusals are decided on a
 * fresh read, and a status set through this process is seen at once.
 */
const NODES_FRESH_MS = 1_000;

type Budgets = Readonly<{ live: NodeBudget[]; schedulable: NodeBudget[] }>;

/** The pool as admission sees it: live, active nodes from their heartbeats, and every app's policy. */
@Injectable()
export class PoolSourceAdapter implements PoolSource {
  /** The read of the node registry in flight, if any. */
  private reading: Promise<NodeView[]> | undefined;
  private latest: Readonly<{ nodes: NodeView[]; readAt: number }> | undefined;
  /** Bumped by `forget`: a read that raced it must not be kept. */
  private generation = 0;
  private readonly budgetsOf = new WeakMap<NodeView[], Budgets>();

  constructor(
    private readonly registry: NodeRegistry,
    private readonly policies: AppPoliciesRepository,
  ) {}

  async liveNodes(read: PoolRead = {}): Promise<NodeBudget[]> {
    return this.budgets(await this.nodes(read)).live;
  }

  async schedulableNodes(read: PoolRead = {}): Promise<NodeBudget[]> {
    return this.budgets(await this.nodes(read)).schedulable;
  }

  /** One read's budgets, shared by every admission decided on that read (the Admitter derives default caps once per list). */
  private budgets(nodes: NodeView[]): Budgets {
    let budgets = this.budgetsOf.get(nodes);
    if (!budgets) {
      budgets = { live: nodes.map(toNodeBudget), schedulable: schedulableBudgets(nodes) };
      this.budgetsOf.set(nodes, budgets);
    }
    return budgets;
  }

  /** The next admission reads the registry (a node's status changed through this process). */
  forget(): void {
    this.generation += 1;
    this.latest = undefined;
    this.reading = undefined;
  }

  /**
   * Every admission needs the whole pool. It is read at most once a second; requests that arrive
   * while a read is in flight share it instead of starting their own (two sequential Redis round
   * trips and a schema check per node). A fresh read never uses a copy, but may share a read that
   * started after it was asked for.
   */
  private nodes(read: PoolRead): Promise<NodeView[]> {
    if (!read.fresh && this.latest && Date.now() - this.latest.readAt < NODES_FRESH_MS) return Promise.resolve(this.latest.nodes);
    if (this.reading) return this.reading;
    const generation = this.generation;
    const startedAt = Date.now();
    const reading = this.registry
      .list()
      .then((nodes) => {
        if (generation === this.generation) this.latest = { nodes, readAt: startedAt };
        return nodes;
      })
      .finally(() => {
        if (this.reading === reading) this.reading = undefined;
      });
    this.reading = reading;
    return reading;
  }

  appPolicies(): Promise<AppQuotaPolicy[]> {
    return this.policies.all();
  }

  appPolicy(appId: string): Promise<AppQuotaPolicy | undefined> {
    return this.policies.one(appId);
  }
}
