import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_BUDGET, JOINED_NODE_BASE_LOAD, type NodeBudget } from './budget.js';
import { DEFAULT_MODEL } from './model.js';
import { baseLoadOf, maxConcurrent, nodeCapacity, poolCapacity, poolUnits } from './pool.js';

const node8: NodeBudget = DEFAULT_NODE_BUDGET;

describe(maxConcurrent.name, () => {
  it('runs 4–5 room-composite recordings on the 8 vCPU / 8 GB origin (product.md)', () => {
    expect(maxConcurrent('egress.room_composite', node8)).toBeGreaterThanOrEqual(4);
    expect(maxConcurrent('egress.room_composite', node8)).toBeLessThanOrEqual(5);
  });

  it('runs 15–20 track-composite recordings on the same node', () => {
    expect(maxConcurrent('egress.track_composite', node8)).toBeGreaterThanOrEqual(15);
    expect(maxConcurrent('egress.track_composite', node8)).toBeLessThanOrEqual(20);
  });

  it('runs 25+ track recordings on the same node', () => {
    expect(maxConcurrent('egress.track', node8)).toBeGreaterThanOrEqual(25);
  });

  it('carries 300–400 WebRTC viewers on ~1 Gbps', () => {
    expect(maxConcurrent('viewer.webrtc', node8)).toBeGreaterThanOrEqual(300);
    expect(maxConcurrent('viewer.webrtc', node8)).toBeLessThanOrEqual(400);
  });

  it('is bound by RAM, not CPU, for room-composite on 8 GB', () => {
    const moreCpu: NodeBudget = { ...node8, cpuMillicores: 64_000 };
    expect(maxConcurrent('egress.room_composite', moreCpu)).toBe(maxConcurrent('egress.room_composite', node8));
  });

  it('charges the egress runtime once, not per recording', () => {
    const { allocatable } = nodeCapacity(node8);
    const perRecording = DEFAULT_MODEL.costs['egress.track_composite'].ramMb;
    const withoutRuntime = Math.floor(allocatable.ramMb / perRecording);
    const withRuntime = Math.floor((allocatable.ramMb - DEFAULT_MODEL.runtimes.egress.ramMb) / perRecording);
    expect(maxConcurrent('egress.track_composite', node8)).toBe(withRuntime);
    expect(withRuntime).toBeLessThan(withoutRuntime);
  });

  it('runs no NVENC transcode on a node without a GPU', () => {
    expect(maxConcurrent('transcode.nvenc', node8)).toBe(0);
  });

  it('counts NVENC sessions per GPU, since one transcode cannot straddle two GPUs', () => {
    const gpuNode: NodeBudget = { ...node8, gpus: [{ nvencSessions: 3 }, { nvencSessions: 3 }] };
    const twoSessionModel = {
      ...DEFAULT_MODEL,
      costs: { ...DEFAULT_MODEL.costs, 'transcode.nvenc': { ...DEFAULT_MODEL.costs['transcode.nvenc'], nvencSessions: 2 } },
    };
    expect(maxConcurrent('transcode.nvenc', gpuNode, twoSessionModel)).toBe(2);
  });

  it('hosts nothing of a kind the node does not accept', () => {
    const sfuOnly: NodeBudget = { ...node8, accepts: ['stream', 'viewer.webrtc'] };
    expect(maxConcurrent('egress.room_composite', sfuOnly)).toBe(0);
    expect(maxConcurrent('stream', sfuOnly)).toBeGreaterThan(0);
  });
});

describe(nodeCapacity.name, () => {
  it('leaves ≈ 6.5 GB of the 8 GB origin after its base load (product.md)', () => {
    const { allocatable } = nodeCapacity(node8);
    expect(allocatable.ramMb).toBeGreaterThan(6_000);
    expect(allocatable.ramMb).toBeLessThanOrEqual(8_192 - 1_536);
    expect(allocatable.nicKbps).toBe(1_000_000);
  });

  it('gives a joined node the RAM the origin spends on the control plane', () => {
    const joined: NodeBudget = { ...node8, id: 'gpu-1', baseLoad: JOINED_NODE_BASE_LOAD };
    const saved = baseLoadOf(node8).ramMb - baseLoadOf(joined).ramMb;
    expect(saved).toBeGreaterThan(0);
    expect(nodeCapacity(joined).allocatable.ramMb).toBe(nodeCapacity(node8).allocatable.ramMb + saved);
  });

  it('never goes below zero when the base load is larger than the budget', () => {
    const tiny: NodeBudget = { ...node8, ramMb: 1_024 };
    expect(nodeCapacity(tiny).allocatable.ramMb).toBe(0);
    expect(maxConcurrent('egress.track', tiny)).toBe(0);
  });
});

describe(poolUnits.name, () => {
  it('cannot split a room-composite across two nodes that each have too little RAM', () => {
    const half = (id: string): NodeBudget => ({ ...node8, id, ramMb: baseLoadOf(node8).ramMb + 1_000 });
    const nodes = [half('a'), half('b')];
    expect(poolCapacity(nodes).total.ramMb).toBe(2_000);
    expect(poolUnits('egress.room_composite', nodes)).toBe(0);
  });

  it('adds up what each node can run on its own', () => {
    const nodes = [node8, { ...node8, id: 'second' }];
    expect(poolUnits('egress.room_composite', nodes)).toBe(2 * maxConcurrent('egress.room_composite', node8));
  });
});
