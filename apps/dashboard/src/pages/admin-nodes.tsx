import { type CapacityView, type NodeList, NodeStatus } from '@tally/contracts';
import type { ReactNode } from 'react';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState, StatusBadge } from '../components/feedback.js';
import { ActionFeedback } from '../components/form.js';
import { LoadedList } from '../components/loaded.js';
import { formatBytes, formatCores, formatKbps, formatMb, formatTime } from '../format.js';

type NodeListItem = NodeList['items'][number];

const ACTION_LABEL: Readonly<Record<NodeStatus, string>> = { active: 'Activate', draining: 'Drain', disabled: 'Disable' };

/** The nodes from their agents' heartbeats, their budgets and what is free on each. */
export function NodesPanel(): ReactNode {
  const api = useApi();
  const nodes = useApiQuery<NodeList>('/v1/nodes');
  const capacity = useApiQuery<CapacityView>('/v1/capacity');
  const action = useAction();

  const setStatus = (node: NodeListItem, status: NodeStatus): Promise<void> =>
    action.run('Changing the node', async () => {
      await api.patch(`/v1/nodes/${encodeURIComponent(node.nodeId)}`, { status });
      return status === 'active' ? `${node.nodeId} takes new work again.` : `${node.nodeId} is ${status}: it takes no new work.`;
    });
  const freeOf = (nodeId: string) => capacity.data?.nodes.find((n) => n.nodeId === nodeId)?.free;

  return (
    <section aria-labelledby="nodes-heading">
      <h2 id="nodes-heading">Nodes</h2>
      <ActionFeedback action={action} />
      <LoadedList
        query={nodes}
        what="nodes"
        empty={
          <EmptyState title="No node is reporting.">
            Start the agent on a node (install.sh does) and it appears here within seconds.
          </EmptyState>
        }
      >
        {(items) => (
          <DataTable
            label="Nodes"
            rows={items}
            rowKey={(n) => n.nodeId}
            rowAttributes={(n) => ({ 'data-node-id': n.nodeId })}
            columns={[
              {
                header: 'Node',
                cell: (n) => (
                  <>
                    {n.nodeId}
                    <div className="muted-text">
                      {n.role}, agent {n.version}, seen {formatTime(n.sentAt)}
                    </div>
                  </>
                ),
              },
              { header: 'Status', cell: (n) => <StatusBadge status={n.status} /> },
              { header: 'Budget', cell: budget },
              {
                header: 'Reserved',
                cell: (n) => `${formatMb(n.reserved.ramMb)}, ${formatCores(n.reserved.cpuMillicores)}, ${formatKbps(n.reserved.nicKbps)}`,
              },
              {
                header: 'Free',
                cell: (n) => {
                  const free = freeOf(n.nodeId);
                  return free ? `${formatMb(free.ramMb)}, ${formatCores(free.cpuMillicores)}, ${formatKbps(free.nicKbps)}` : '—';
                },
              },
              { header: 'Host use', cell: (n) => `${formatCores(n.used.cpuMillicores)}, ${formatMb(n.used.ramMb)}` },
              { header: 'Disk', cell: disks },
            ]}
            actions={(n) =>
              NodeStatus.options
                .filter((s) => s !== n.status)
                .map((s) => (
                  <button
                    key={s}
                    type="button"
                    className={s === 'active' ? undefined : 'danger'}
                    aria-label={`${ACTION_LABEL[s]} ${n.nodeId}`}
                    onClick={() => void setStatus(n, s)}
                  >
                    {ACTION_LABEL[s]}
                  </button>
                ))
            }
          />
        )}
      </LoadedList>
    </section>
  );
}

function budget(n: NodeListItem): string {
  const gpus = n.budget.gpus.map((g) => `${g.name ?? 'GPU'} (${g.nvencSessions} NVENC)`).join(', ');
  return `${formatCores(n.budget.cpuMillicores)}, ${formatMb(n.budget.ramMb)}, ${n.budget.nicMbps} Mbps${gpus ? `, ${gpus}` : ''}`;
}

/** Each media filesystem: free of its size, its stop watermark, and what running writers reserve there. */
function disks(n: NodeListItem): ReactNode {
  if (n.disks.length === 0) return '—';
  return (
    <ul className="plain-list">
      {n.disks.map((d) => (
        <li key={d.key} data-filesystem={d.key}>
          {d.mount || d.key} ({d.roles.join(', ')}): {formatBytes(d.freeBytes)} free of {formatBytes(d.totalBytes)}
          <div className="muted-text">
            {d.freeBytes <= d.alertFreeBytes ? 'low, ' : ''}stops writers below {formatBytes(d.stopFreeBytes)}; writers reserve{' '}
            {formatMb(d.reservedMb)} of {formatMb(d.admissibleMb)}
          </div>
        </li>
      ))}
    </ul>
  );
}
