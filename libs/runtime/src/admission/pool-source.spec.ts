import type { NodeView } from '@tally/contracts';
import type { NodeRegistry } from '@tally/nodes';
import { describe, expect, it } from 'vitest';
import type { AppPoliciesRepository } from './app-policies.repository.js';
import { PoolSourceAdapter } from './pool-source.js';

function setup() {
  let reads = 0;
  let nodes: NodeView[] = [];
  const registry = {
    list: () => {
      reads += 1;
      return Promise.resolve(nodes);
    },
  } as unknown as NodeRegistry;
  return {
    sut: new PoolSourceAdapter(registry, {} as AppPoliciesRepository),
    reads: () => reads,
    setNodes: (next: NodeView[]) => (nodes = next),
  };
}

const node = (nodeId: string, status: NodeView['status'] = 'active') =>
  ({ nodeId, status, budget: { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] } }) as unknown as NodeView;

describe(PoolSourceAdapter.name, () => {
  it('shares one read of the registry between admissions, and reads it again for a fresh read', async () => {
    const t = setup();
    t.setNodes([node('a')]);
    await Promise.all([t.sut.liveNodes(), t.sut.schedulableNodes(), t.sut.liveNodes()]);
    await t.sut.liveNodes();
    expect(t.reads()).toBe(1);

    t.setNodes([node('a'), node('b')]);
    expect((await t.sut.liveNodes({ fresh: true })).map((n) => n.id)).toEqual(['a', 'b']);
    expect(t.reads()).toBe(2);
    // The fresh read is the copy the next admissions share.
    expect((await t.sut.liveNodes()).map((n) => n.id)).toEqual(['a', 'b']);
    expect(t.reads()).toBe(2);
  });

  it('sees a status set through this process at once', async () => {
    const t = setup();
    t.setNodes([node('a')]);
    expect(await t.sut.schedulableNodes()).toHaveLength(1);

    t.setNodes([node('a', 'draining')]);
    t.sut.forget();

    expect(await t.sut.schedulableNodes()).toHaveLength(0);
  });
});
