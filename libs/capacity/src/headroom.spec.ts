import { describe, expect, it } from 'vitest';
import { admit, type PoolState } from './admission.js';
import { unlimited } from './app-limits.js';
import { DEFAULT_NODE_BUDGET } from './budget.js';
import { headroom } from './headroom.js';
import { DEFAULT_MODEL } from './model.js';
import { maxConcurrent } from './pool.js';
import { EMPTY_USAGE } from './usage.js';

describe(headroom.name, () => {
  it('shows an empty node able to run what maxConcurrent says', () => {
    const [sut] = headroom({ nodes: [DEFAULT_NODE_BUDGET], model: DEFAULT_MODEL, usage: EMPTY_USAGE });
    expect(sut?.units['egress.room_composite']).toBe(maxConcurrent('egress.room_composite', DEFAULT_NODE_BUDGET));
    expect(sut?.free).toEqual(sut?.allocatable);
  });

  it('shows one Chrome recording fewer once one runs, the egress runtime already paid', () => {
    const pool: PoolState = { nodes: [DEFAULT_NODE_BUDGET], model: DEFAULT_MODEL, usage: EMPTY_USAGE };
    const admitted = admit(pool, { appId: 'app', limits: unlimited(), kind: 'egress.room_composite' });
    if (!admitted.ok) throw new Error('refused');
    const [sut] = headroom({ ...pool, usage: admitted.usage });
    expect(sut?.units['egress.room_composite']).toBe(maxConcurrent('egress.room_composite', DEFAULT_NODE_BUDGET) - 1);
    expect(sut?.used.ramMb).toBe(1_305 + 819);
  });
});
