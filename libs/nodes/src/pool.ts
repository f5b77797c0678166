import { JOINED_NODE_BASE_LOAD, type NodeBudget, type WorkloadKind } from '@tally/capacity';
import type { NodeRole, NodeView } from '@tally/contracts';

const EGRESS_KINDS = [
  'egress.room_composite',
  'egress.track_composite',
  'egress.track',
  'egress.passthrough',
] as const satisfies readonly WorkloadKind[];

/**
 * The work a joined node's role runs (docs/cluster.md); the origin runs every kind. Cameras are
 * served by the API processes, which run on the origin only. NVENC work fits only where the agent
 * measured NVENC sessions, so a worker node with a GPU takes it too.
 */
export const ROLE_ACCEPTS: Readonly<Record<Exclude<NodeRole, 'origin'>, readonly WorkloadKind[]>> = {
  media: ['stream', 'viewer.webrtc'],
  worker: [...EGRESS_KINDS, 'ingress.rtmp', 'ingress.whip', 'transcode.cpu', 'transcode.nvenc'],
  gpu: [...EGRESS_KINDS, 'transcode.nvenc', 'transcode.cpu'],
};

/**
 * The capacity model's input for one node. A joined node runs no control plane, so its base load is
 * smaller, and it takes only the kinds of work its role runs.
 */
export function toNodeBudget(node: NodeView): NodeBudget {
  return {
    id: node.nodeId,
    cpuMillicores: node.budget.cpuMillicores,
    ramMb: node.budget.ramMb,
    nicMbps: node.budget.nicMbps,
    gpus: node.budget.gpus.map((g) =>
      g.name === undefined ? { nvencSessions: g.nvencSessions } : { name: g.name, nvencSessions: g.nvencSessions },
    ),
    ...(node.role !== 'origin' ? { baseLoad: JOINED_NODE_BASE_LOAD, accepts: ROLE_ACCEPTS[node.role] } : {}),
    ...(node.filesystems === undefined ? {} : { disks: node.filesystems.map((f) => ({ ...f })) }),
  };
}

/** Nodes that take new work: only `active` ones; draining and disabled nodes keep what they run. */
export function schedulableBudgets(nodes: readonly NodeView[]): NodeBudget[] {
  return nodes.filter((n) => n.status === 'active').map(toNodeBudget);
}
