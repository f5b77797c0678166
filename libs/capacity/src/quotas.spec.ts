import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_BUDGET, type NodeBudget } from './budget.js';
import { defaultLimits, effectiveLimits, limitsOfApps, shareOfNode, type AppQuotaPolicy } from './quotas.js';
import { maxConcurrent } from './pool.js';

const node8: NodeBudget = DEFAULT_NODE_BUDGET;
const nodes = (n: number): NodeBudget[] => Array.from({ length: n }, (_, i) => ({ ...node8, id: `node-${i}` }));
const apps = (n: number): AppQuotaPolicy[] => Array.from({ length: n }, (_, i) => ({ appId: `app-${i}` }));

describe(defaultLimits.name, () => {
  describe('on a shared 8 vCPU / 8 GB node (product.md: two apps per node)', () => {
    const sut = defaultLimits([node8]);

    it('gives an app ≈ 10 concurrent streams, each sized with its WebRTC audience', () => {
      expect(sut.streams).toBe(10);
    });

    it('gives an app 2 Chrome recordings: half of the node’s 4, rounded down', () => {
      expect(sut.room_composites).toBe(Math.floor(maxConcurrent('egress.room_composite', node8) / 2));
      expect(sut.room_composites).toBeGreaterThanOrEqual(2);
    });

    it("sizes an auto app's recordings on passthrough: half of the ≥ 100 one node records", () => {
      expect(sut.recordings).toBeGreaterThanOrEqual(50);
      expect(sut.recordings).toBeGreaterThan(10 * sut.room_composites);
    });

    it('sizes recordings on the mode an app forces', () => {
      const chrome = defaultLimits([node8], 'room_composite');
      const transcoding = defaultLimits([node8], 'track_composite');
      expect(chrome.recordings).toBe(chrome.room_composites);
      expect(transcoding.recordings).toBeGreaterThanOrEqual(8);
      expect(transcoding.recordings).toBeLessThan(sut.recordings);
    });

    it('gives an app half of the ~400 viewers the NIC carries', () => {
      expect(sut.viewers).toBe(200);
    });
  });

  it('sizes recordings on the mode an app forces', () => {
    expect(defaultLimits([node8], 'room_composite').recordings).toBe(defaultLimits([node8]).room_composites);
    expect(defaultLimits([node8], 'track_composite').recordings).toBeLessThan(defaultLimits([node8]).recordings);
    expect(defaultLimits([node8], 'track').recordings).toBeGreaterThan(defaultLimits([node8], 'room_composite').recordings);
  });

  it('sizes the cap on one node: a second node does not double it', () => {
    expect(defaultLimits(nodes(2))).toEqual(defaultLimits(nodes(1)));
  });

  it('follows the pool’s largest node when nodes differ', () => {
    const big: NodeBudget = { ...node8, id: 'big', ramMb: 16_384, cpuMillicores: 16_000 };
    expect(defaultLimits([node8, big]).room_composites).toBeGreaterThan(defaultLimits([node8]).room_composites);
  });

  describe('on a small 2 vCPU / 4 GB host that runs a Chrome recording and an ingress once', () => {
    const small: NodeBudget = { ...node8, id: 'small', cpuMillicores: 2_000, ramMb: 4_096 };

    it('gives an app at least one of each class the node runs, not "0 of 0"', () => {
      expect(maxConcurrent('egress.room_composite', small)).toBeGreaterThanOrEqual(1);
      expect(maxConcurrent('egress.room_composite', small)).toBeLessThan(2);
      const sut = defaultLimits([small]);
      expect(sut.room_composites).toBe(1);
      expect(sut.ingresses).toBeGreaterThanOrEqual(1);
    });

    it('still gives nothing of a class the node cannot run once', () => {
      const tiny: NodeBudget = { ...small, ramMb: 2_048, cpuMillicores: 1_000 };
      expect(maxConcurrent('egress.room_composite', tiny)).toBe(0);
      expect(defaultLimits([tiny]).room_composites).toBe(0);
    });
  });

  it('gives nothing where the pool has no node', () => {
    expect(Object.values(defaultLimits([])).every((v) => v === 0)).toBe(true);
  });
});

describe(limitsOfApps.name, () => {
  it('gives the 101st app the same caps as the first: idle apps take nothing from active ones', () => {
    const sut = limitsOfApps([node8], apps(101));
    expect(sut['app-100']).toEqual(sut['app-0']);
    expect(sut['app-100']?.streams).toBe(10);
  });

  it('lets caps sum to more than the node runs', () => {
    const sut = limitsOfApps([node8], apps(10));
    const sum = Object.values(sut).reduce((s, l) => s + l.room_composites, 0);
    expect(sum).toBeGreaterThan(maxConcurrent('egress.room_composite', node8));
  });
});

describe(effectiveLimits.name, () => {
  const defaults = defaultLimits([node8]);

  it('uses an explicit cap as is, above or below the default', () => {
    expect(effectiveLimits({ limits: { streams: 40 } }, defaults).streams).toBe(40);
    expect(effectiveLimits({ limits: { streams: 1 } }, defaults).streams).toBe(1);
    expect(effectiveLimits({ limits: { streams: 1 } }, defaults).recordings).toBe(defaults.recordings);
  });

  it('never caps an app below its own guarantee', () => {
    expect(effectiveLimits({ limits: { streams: 1 }, guarantees: { streams: 4 } }, defaults).streams).toBe(4);
    expect(effectiveLimits({ guarantees: { room_composites: 3 } }, defaults).room_composites).toBe(3);
  });
});

describe(shareOfNode.name, () => {
  it('halves what one node runs, rounding down, with a floor of 1 for a class the node runs', () => {
    expect(shareOfNode(4, 2)).toBe(2);
    expect(shareOfNode(5, 2)).toBe(2);
    expect(shareOfNode(1, 2)).toBe(1);
    expect(shareOfNode(0, 2)).toBe(0);
  });
});
