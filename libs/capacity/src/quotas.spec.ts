import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_BUDGET, type NodeBudget } from './budget.js';
import { deriveQuotas, type AppQuotaPolicy } from './quotas.js';
import { poolUnits } from './pool.js';

const node8: NodeBudget = DEFAULT_NODE_BUDGET;
const nodes = (n: number): NodeBudget[] => Array.from({ length: n }, (_, i) => ({ ...node8, id: `node-${i}` }));
const apps = (n: number): AppQuotaPolicy[] => Array.from({ length: n }, (_, i) => ({ appId: `app-${i}` }));

function limitsOf(result: ReturnType<typeof deriveQuotas>, appId: string) {
  const limits = result.limits[appId];
  if (limits === undefined) throw new Error(`no limits for ${appId}`);
  return limits;
}

describe(deriveQuotas.name, () => {
  describe('on a shared 8 vCPU / 8 GB node (two apps per node by default)', () => {
    const sut = deriveQuotas([node8], [{ appId: 'shared' }]);
    const shared = limitsOf(sut, 'shared');

    it('gives an app ≈ 10 concurrent streams, each sized with its WebRTC audience', () => {
      expect(shared.streams).toBe(10);
    });

    it('gives an app 2 Chrome recordings: half of the node’s 4, never the 2.5 rounded up to 3 (it would promise 6 on a node that runs 4)', () => {
      expect(shared.room_composites).toBeGreaterThanOrEqual(2);
      expect(shared.room_composites).toBeLessThanOrEqual(3);
      expect(2 * shared.room_composites).toBeLessThanOrEqual(poolUnits('egress.room_composite', [node8]));
    });

    it("sizes an auto app's recordings on passthrough: half of the ≥ 100 one node records", () => {
      expect(shared.recordings).toBeGreaterThanOrEqual(50);
      expect(shared.recordings).toBeGreaterThan(10 * shared.room_composites);
    });

    it('sizes recordings on the mode an app forces', () => {
      const forced = deriveQuotas(
        [node8],
        [
          { appId: 'chrome', egressMode: 'room_composite' },
          { appId: 'transcoding', egressMode: 'track_composite' },
        ],
      );
      expect(limitsOf(forced, 'chrome').recordings).toBe(limitsOf(forced, 'chrome').room_composites);
      expect(limitsOf(forced, 'transcoding').recordings).toBeGreaterThanOrEqual(8);
      expect(limitsOf(forced, 'transcoding').recordings).toBeLessThan(shared.recordings);
    });

    it('gives an app half of the ~400 viewers the NIC carries', () => {
      expect(shared.viewers).toBe(200);
    });
  });

  it('does not shrink an app’s quota when a second app is created', () => {
    const alone = limitsOf(deriveQuotas([node8], apps(1)), 'app-0');
    const withNeighbour = limitsOf(deriveQuotas([node8], apps(2)), 'app-0');
    expect(withNeighbour).toEqual(alone);
  });

  it('shrinks every default in the same proportion once more apps exist than the pool holds', () => {
    const sut = deriveQuotas([node8], apps(4));
    for (let i = 0; i < 4; i++) expect(limitsOf(sut, `app-${i}`).streams).toBe(5);
    expect(sut.warnings).toEqual([]);
  });

  it('grows crowded apps’ quotas when a node joins', () => {
    const oneNode = limitsOf(deriveQuotas(nodes(1), apps(4)), 'app-0');
    const twoNodes = limitsOf(deriveQuotas(nodes(2), apps(4)), 'app-0');
    expect(twoNodes.streams).toBeGreaterThan(oneNode.streams);
    expect(twoNodes.room_composites).toBeGreaterThan(oneNode.room_composites);
  });

  it('uses an explicit limit as is and splits the rest among the others', () => {
    const sut = deriveQuotas([node8], [{ appId: 'big', limits: { streams: 15 } }, { appId: 'small' }]);
    expect(limitsOf(sut, 'big').streams).toBe(15);
    expect(limitsOf(sut, 'small').streams).toBe(5);
  });

  it('keeps a guaranteed minimum out of the fair split', () => {
    const sut = deriveQuotas([node8], [{ appId: 'vip', guaranteed: { room_composites: 3 } }, ...apps(3)]);
    expect(limitsOf(sut, 'vip').room_composites).toBe(3);
    expect(limitsOf(sut, 'app-0').room_composites).toBe(0);
  });

  it('weighs apps against each other', () => {
    const sut = deriveQuotas(nodes(1), [{ appId: 'heavy', weight: 3 }, { appId: 'light' }]);
    expect(limitsOf(sut, 'heavy').streams).toBe(15);
    expect(limitsOf(sut, 'light').streams).toBe(5);
  });

  it('warns when explicit limits promise more than the pool has, and derives nothing on top', () => {
    const sut = deriveQuotas([node8], [{ appId: 'greedy', limits: { room_composites: 9 } }, { appId: 'other' }]);
    expect(sut.warnings.some((w) => w.includes('room_composites'))).toBe(true);
    expect(limitsOf(sut, 'other').room_composites).toBe(0);
  });

  it('follows the number of apps a node is expected to hold', () => {
    const sut = deriveQuotas([node8], [{ appId: 'solo' }], { sizing: { appsPerNode: 1 } });
    expect(limitsOf(sut, 'solo').room_composites).toBe(poolUnits('egress.room_composite', [node8]));
  });

  it('gives nothing where the pool has no node', () => {
    const sut = deriveQuotas([], [{ appId: 'early' }]);
    expect(Object.values(limitsOf(sut, 'early')).every((v) => v === 0)).toBe(true);
  });
});
