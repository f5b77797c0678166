import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_BUDGET } from './budget.js';
import { DEFAULT_MODEL } from './model.js';
import { baseLoadOf } from './pool.js';
import { workerLimits } from './worker-limits.js';

describe(workerLimits.name, () => {
  it('gives egress its idle footprint plus what the node can admit, never the base load', () => {
    const limits = workerLimits(DEFAULT_MODEL, DEFAULT_NODE_BUDGET);
    const base = baseLoadOf(DEFAULT_NODE_BUDGET, DEFAULT_MODEL);
    expect(limits.egress.memoryMb).toBe(8_192 - base.ramMb + 819);
    expect(limits.egress.memoryMb).toBeLessThan(8_192);
    expect(limits.egress.cpuMillicores).toBe(8_000 - base.cpuMillicores + 56);
    expect(limits.ingress.memoryMb).toBe(8_192 - base.ramMb + 270);
  });

  it('keeps a floor on a node whose base load takes everything', () => {
    const tiny = { ...DEFAULT_NODE_BUDGET, ramMb: 1_000, cpuMillicores: 200 };
    expect(workerLimits(DEFAULT_MODEL, tiny).egress).toEqual({ memoryMb: 819, cpuMillicores: 250 });
  });
});
