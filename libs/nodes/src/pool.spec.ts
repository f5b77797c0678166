import { DEFAULT_MODEL, JOINED_NODE_BASE_LOAD, nodeCapacity } from '@tally/capacity';
import type { NodeView } from '@tally/contracts';
import { describe, expect, it } from 'vitest';
import { schedulableBudgets, toNodeBudget } from './pool.js';

const node = (nodeId: string, over: Partial<NodeView> = {}): NodeView => ({
  nodeId,
  role: 'origin',
  budget: { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [{ name: 'NVIDIA L4', nvencSessions: 32 }] },
  used: { cpuMillicores: 500, ramMb: 2_000 },
  labels: {},
  version: '0.1.0',
  startedAt: '2025-01-01T00:00:00.000Z',
  sentAt: '2025-01-01T00:00:05.000Z',
  status: 'active',
  ...over,
});

describe(toNodeBudget.name, () => {
  it('gives the capacity model the reported budget under the node id', () => {
    expect(toNodeBudget(node('origin-1'))).toEqual({
      id: 'origin-1',
      cpuMillicores: 8_000,
      ramMb: 8_192,
      nicMbps: 1_000,
      gpus: [{ name: 'NVIDIA L4', nvencSessions: 32 }],
    });
  });

  it('charges a joined worker node no control-plane base load, so it offers more', () => {
    const worker = toNodeBudget(node('media-1', { role: 'worker' }));

    expect(worker.baseLoad).toEqual(JOINED_NODE_BASE_LOAD);
    expect(nodeCapacity(worker, DEFAULT_MODEL).allocatable.ramMb).toBeGreaterThan(
      nodeCapacity(toNodeBudget(node('o')), DEFAULT_MODEL).allocatable.ramMb,
    );
  });
});

describe(schedulableBudgets.name, () => {
  it('leaves draining and disabled nodes out of new placements', () => {
    const sut = schedulableBudgets([node('a'), node('b', { status: 'draining' }), node('c', { status: 'disabled' })]);

    expect(sut.map((n) => n.id)).toEqual(['a']);
  });
});
