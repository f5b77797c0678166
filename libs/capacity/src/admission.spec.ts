import { describe, expect, it } from 'vitest';
import { admit, fits, release, type AdmissionRequest, type PoolState } from './admission.js';
import type { AppLimits } from './app-limits.js';
import { DEFAULT_NODE_BUDGET, type NodeBudget } from './budget.js';
import { DEFAULT_MODEL } from './model.js';
import { baseLoadOf } from './pool.js';
import { EMPTY_USAGE, nodeUsageOf, type Usage } from './usage.js';

const generous: AppLimits = {
  streams: 100,
  viewers: 1_000,
  recordings: 100,
  room_composites: 100,
  ingresses: 100,
  transcodes: 100,
  cameras: 100,
  camera_viewers: 100,
};
const node = (id: string, patch: Partial<NodeBudget> = {}): NodeBudget => ({ ...DEFAULT_NODE_BUDGET, id, ...patch });
const poolOf = (nodes: NodeBudget[], usage: Usage = EMPTY_USAGE): PoolState => ({ nodes, model: DEFAULT_MODEL, usage });
const ask = (kind: AdmissionRequest['kind'], patch: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  appId: 'app',
  limits: generous,
  kind,
  ...patch,
});

/** Admits one request after another, failing the test on a refusal. */
function admitAll(pool: PoolState, requests: AdmissionRequest[]): PoolState {
  return requests.reduce((p, r) => {
    const result = admit(p, r);
    if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`);
    return { ...p, usage: result.usage };
  }, pool);
}

describe(fits.name, () => {
  it('admits a recording and says on which node', () => {
    const sut = fits(poolOf([node('origin')]), ask('egress.room_composite'));
    expect(sut).toMatchObject({ ok: true, placement: { reservation: { nodeId: 'origin', count: 1 } } });
  });

  it('refuses past the app’s quota, naming the quota with limit, used and requested', () => {
    const limits = { ...generous, streams: 2 };
    const pool = admitAll(poolOf([node('origin')]), [ask('stream', { limits }), ask('stream', { limits })]);
    expect(fits(pool, ask('stream', { limits }))).toEqual({
      ok: false,
      refusal: { code: 'quota_exceeded', resource: 'app.streams', limit: 2, used: 2, requested: 1 },
    });
  });

  it('counts a room-composite against the app’s Chrome recordings as well as its recordings', () => {
    const limits = { ...generous, room_composites: 1 };
    const pool = admitAll(poolOf([node('origin')]), [ask('egress.room_composite', { limits })]);
    expect(fits(pool, ask('egress.room_composite', { limits }))).toMatchObject({
      ok: false,
      refusal: { resource: 'app.room_composites' },
    });
    expect(fits(pool, ask('egress.track_composite', { limits })).ok).toBe(true);
  });

  it('refuses a 1.3 GB Chrome recording on two nodes with 1 GB free each, naming node.ram', () => {
    const small = (id: string) => node(id, { ramMb: baseLoadOf(DEFAULT_NODE_BUDGET).ramMb + 2_000 });
    const pool = poolOf([small('a'), small('b')]);
    const sut = fits(pool, ask('egress.room_composite'));
    expect(sut.ok).toBe(false);
    if (sut.ok) return;
    expect(sut.refusal).toMatchObject({ code: 'capacity_exhausted', resource: 'node.ram', limit: 2_000, used: 0 });
    expect(sut.refusal.requested).toBe(1_305 + 819);
  });

  it('refuses the fifth Chrome recording on the 8 GB origin', () => {
    const pool = admitAll(
      poolOf([node('origin')]),
      Array.from({ length: 4 }, () => ask('egress.room_composite')),
    );
    expect(fits(pool, ask('egress.room_composite'))).toMatchObject({
      ok: false,
      refusal: { code: 'capacity_exhausted', resource: 'node.ram', nodeId: 'origin', requested: 1_305 },
    });
  });

  it('charges the egress runtime with the first recording on a node only', () => {
    const first = fits(poolOf([node('origin')]), ask('egress.track'));
    const pool = admitAll(poolOf([node('origin')]), [ask('egress.track')]);
    const second = fits(pool, ask('egress.track'));
    expect(first).toMatchObject({
      ok: true,
      placement: { charge: { ramMb: 200 + 819 }, runtime: { name: 'egress', idle: { ramMb: 819 } } },
    });
    expect(second).toMatchObject({ ok: true, placement: { charge: { ramMb: 200 }, workload: { ramMb: 200 } } });
  });

  it('packs recordings onto the fullest node that still fits, keeping the other free for Chrome', () => {
    const pool = admitAll(poolOf([node('a'), node('b')]), [ask('egress.track', { nodeId: 'b' })]);
    expect(fits(pool, ask('egress.track'))).toMatchObject({ ok: true, placement: { reservation: { nodeId: 'b' } } });
  });

  it('spreads rooms so that their viewers find room on the same node', () => {
    const pool = admitAll(poolOf([node('a'), node('b')]), [ask('stream', { nodeId: 'a' })]);
    expect(fits(pool, ask('stream'))).toMatchObject({ ok: true, placement: { reservation: { nodeId: 'b' } } });
  });

  it('places a viewer on its room’s node and refuses it there when that NIC is full', () => {
    const pool = poolOf([node('a', { nicMbps: 10 }), node('b')]);
    const sut = fits(pool, ask('viewer.webrtc', { nodeId: 'a', count: 5 }));
    expect(sut).toMatchObject({
      ok: false,
      refusal: { resource: 'node.nic', nodeId: 'a', limit: 10_000, used: 0, requested: 12_500 },
    });
    expect(fits(pool, ask('viewer.webrtc', { nodeId: 'a', count: 4 })).ok).toBe(true);
  });

  it('says no node is available when the pinned node left or no node hosts the kind', () => {
    const pool = poolOf([node('a', { accepts: ['stream'] })]);
    expect(fits(pool, ask('viewer.webrtc', { nodeId: 'gone' }))).toMatchObject({ refusal: { resource: 'node.unavailable' } });
    expect(fits(pool, ask('egress.track'))).toMatchObject({ refusal: { resource: 'node.unavailable' } });
  });

  it('sends NVENC work to a GPU with free sessions and names node.nvenc when none has any', () => {
    const pool = poolOf([node('cpu'), node('gpu', { gpus: [{ nvencSessions: 2 }, { nvencSessions: 3 }] })]);
    const ladder = fits(pool, ask('transcode.nvenc', { count: 3 }));
    expect(ladder).toMatchObject({ ok: true, placement: { reservation: { nodeId: 'gpu', gpuIndex: 1 }, nvencSessions: 3 } });
    expect(fits(pool, ask('transcode.nvenc', { count: 4 }))).toMatchObject({
      ok: false,
      refusal: { resource: 'node.nvenc', nodeId: 'gpu', limit: 3, requested: 4 },
    });
  });

  it('rejects a count that is not a positive integer', () => {
    expect(() => fits(poolOf([node('a')]), ask('stream', { count: 0 }))).toThrow(RangeError);
  });
});

describe(release.name, () => {
  it('gives back exactly what the admission took, the egress runtime included', () => {
    const start = poolOf([node('origin')]);
    const admitted = admit(start, ask('egress.room_composite'));
    if (!admitted.ok) throw new Error('refused');
    const sut = release({ ...start, usage: admitted.usage }, admitted.placement.reservation);
    expect(nodeUsageOf(sut, 'origin').load).toEqual({ ramMb: 0, cpuMillicores: 0, nicKbps: 0 });
    expect(sut.apps['app']).toEqual({ recordings: 0, room_composites: 0 });
  });

  it('refuses to release what was never admitted', () => {
    expect(() => release(poolOf([node('origin')]), { appId: 'app', kind: 'egress.track', count: 1, nodeId: 'origin' })).toThrow();
  });
});
