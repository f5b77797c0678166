import { JOINED_NODE_BASE_LOAD, type NodeBudget } from '@tally/capacity';
import type { NodeView } from '@tally/contracts';

/** The capacity model's input for one node. A joined node runs no control plane, so its base load is smaller. */
export function toNodeBudget(node: NodeView): NodeBudget {
  return {
    id: node.nodeId,
    cpuMillicores: node.budget.cpuMillicores,
    ramMb: node.budget.ramMb,
    nicMbps: node.budget.nicMbps,
    gpus: node.budget.gpus.map((g) =>
      g.name === undefined ? { nvencSessions: g.nvencSessions } : { name: g.name, nvencSessions: g.nvencSessions },
    ),
    ...(node.role !== 'origin' ? { baseLoad: JOINED_NODE_BASE_LOAD } : {}),
  };
}

/** Nodes that take new work: only `active` ones; draining and disabled nodes keep what they run. */
export function schedulableBudgets(nodes: readonly NodeView[]): NodeBudget[] {
  return nodes.filter((n) => n.status === 'active').map(toNodeBudget);
}
