import { type ReactNode, useState } from 'react';
import type { Api } from '../api/client.js';
import { type CapacityView, NODE_STATUSES, type NodeList, type NodeListItem, type NodeStatus } from '../api/types.js';
import { EmptyState, ErrorMessage, Loading, Notice, StatusBadge } from '../components/feedback.js';
import { formatCores, formatKbps, formatMb, formatTime } from '../format.js';
import { usePoll } from '../use-poll.js';

const ACTION_LABEL: Readonly<Record<NodeStatus, string>> = { active: 'Activate', draining: 'Drain', disabled: 'Disable' };

/** The nodes from their agents' heartbeats, their budgets and what is free on each. */
export function NodesPanel({ api }: { api: Api }): ReactNode {
  const nodes = usePoll('nodes', (signal) => api.get<NodeList>('/v1/nodes', signal));
  const capacity = usePoll('capacity', (signal) => api.get<CapacityView>('/v1/capacity', signal));
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();

  const setStatus = async (node: NodeListItem, status: NodeStatus): Promise<void> => {
    setError(undefined);
    setNotice(undefined);
    try {
      await api.patch(`/v1/nodes/${encodeURIComponent(node.nodeId)}`, { status });
      setNotice(status === 'active' ? `${node.nodeId} takes new work again.` : `${node.nodeId} is ${status}: it takes no new work.`);
      nodes.reload();
      capacity.reload();
    } catch (caught) {
      setError(caught);
    }
  };

  const freeOf = (nodeId: string) => capacity.data?.nodes.find((n) => n.nodeId === nodeId);

  return (
    <section aria-labelledby="nodes-heading">
      <h2 id="nodes-heading">Nodes</h2>
      <ErrorMessage error={nodes.error} action="Loading nodes" />
      <ErrorMessage error={error} action="Changing the node" />
      {notice ? <Notice tone="success">{notice}</Notice> : null}
      {nodes.data === undefined ? (
        nodes.error ? null : (
          <Loading what="nodes" />
        )
      ) : nodes.data.items.length === 0 ? (
        <EmptyState title="No node is reporting.">
          Start the agent on a node (install.sh does) and it appears here within seconds.
        </EmptyState>
      ) : (
        <table aria-label="Nodes">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Status</th>
              <th scope="col">Budget</th>
              <th scope="col">Reserved</th>
              <th scope="col">Free</th>
              <th scope="col">Host use</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {nodes.data.items.map((n) => {
              const free = freeOf(n.nodeId)?.free;
              return (
                <tr key={n.nodeId} data-node-id={n.nodeId}>
                  <th scope="row">
                    {n.nodeId}
                    <div className="muted-text">
                      {n.role}, agent {n.version}, seen {formatTime(n.sentAt)}
                    </div>
                  </th>
                  <td>
                    <StatusBadge status={n.status} />
                  </td>
                  <td>
                    {formatCores(n.budget.cpuMillicores)}, {formatMb(n.budget.ramMb)}, {n.budget.nicMbps} Mbps
                    {n.budget.gpus.length > 0
                      ? `, ${n.budget.gpus.map((g) => `${g.name ?? 'GPU'} (${g.nvencSessions} NVENC)`).join(', ')}`
                      : ''}
                  </td>
                  <td>
                    {formatMb(n.reserved.ramMb)}, {formatCores(n.reserved.cpuMillicores)}, {formatKbps(n.reserved.nicKbps)}
                  </td>
                  <td>{free ? `${formatMb(free.ramMb)}, ${formatCores(free.cpuMillicores)}, ${formatKbps(free.nicKbps)}` : '—'}</td>
                  <td>
                    {formatCores(n.used.cpuMillicores)}, {formatMb(n.used.ramMb)}
                  </td>
                  <td className="actions">
                    {NODE_STATUSES.filter((s) => s !== n.status).map((s) => (
                      <button
                        key={s}
                        type="button"
                        className={s === 'active' ? undefined : 'danger'}
                        aria-label={`${ACTION_LABEL[s]} ${n.nodeId}`}
                        onClick={() => void setStatus(n, s)}
                      >
                        {ACTION_LABEL[s]}
                      </button>
                    ))}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
