import { DEFAULT_MODEL, EMPTY_USAGE, fits, JOINED_NODE_BASE_LOAD, nodeCapacity, unlimited } from '@tally/capacity';
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

  it('places on a joined node only the work its role runs; the origin takes every kind', () => {
    const [origin, media, worker, gpu] = (['origin', 'media', 'worker', 'gpu'] as const).map((role) => toNodeBudget(node(role, { role })));

    expect(origin?.accepts).toBeUndefined();
    expect(media?.accepts).toEqual(['stream', 'viewer.webrtc']);
    expect(worker?.accepts).toContain('egress.room_composite');
    expect(worker?.accepts).toContain('transcode.cpu');
    expect(worker?.accepts).toContain('transcode.nvenc');
    expect(worker?.accepts).not.toContain('stream');
    expect(worker?.accepts).not.toContain('camera.mjpeg');
    expect(gpu?.accepts).toContain('transcode.nvenc');
    expect(gpu?.accepts).not.toContain('ingress.rtmp');
  });

  it('never lets the admission put a recording on a media node, even when the media node has all the room', () => {
    const pool = {
      nodes: [
        toNodeBudget(node('media-1', { role: 'media', budget: { cpuMillicores: 64_000, ramMb: 65_536, nicMbps: 10_000, gpus: [] } })),
        toNodeBudget(node('origin-1')),
      ],
      model: DEFAULT_MODEL,
      usage: EMPTY_USAGE,
    };

    const placed = fits(pool, { kind: 'egress.track_composite', appId: 'a', limits: unlimited() });

    expect(placed).toMatchObject({ ok: true, placement: { reservation: { nodeId: 'origin-1' } } });
  });
});

describe(schedulableBudgets.name, () => {
  it('leaves draining and disabled nodes out of new placements', () => {
    const sut = schedulableBudgets([node('a'), node('b', { status: 'draining' }), node('c', { status: 'disabled' })]);

    expect(sut.map((n) => n.id)).toEqual(['a']);
  });
});
