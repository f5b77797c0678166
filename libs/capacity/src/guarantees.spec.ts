import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_BUDGET } from './budget.js';
import { checkGuarantees, guaranteeTake, guaranteeUnitCosts, guardGuarantees } from './guarantees.js';
import { DEFAULT_MODEL } from './model.js';
import { maxConcurrent, nodeCapacity } from './pool.js';
import { load, ZERO_LOAD } from './resources.js';

const node8 = DEFAULT_NODE_BUDGET;
const units = guaranteeUnitCosts(DEFAULT_MODEL);

describe(checkGuarantees.name, () => {
  it('accepts guarantees that fit beside the others', () => {
    expect(checkGuarantees([node8], DEFAULT_MODEL, [{ room_composites: 1 }], { room_composites: 2 })).toEqual({ ok: true });
  });

  it('names the class that does not fit and the room left for it', () => {
    const fit = maxConcurrent('egress.room_composite', node8);
    const sut = checkGuarantees([node8], DEFAULT_MODEL, [{ room_composites: 1 }], { streams: 1, room_composites: fit });
    expect(sut).toEqual({ ok: false, cls: 'room_composites', requested: fit, room: fit - 1 });
  });

  it('counts each class against what the other classes take of the same RAM', () => {
    const before = checkGuarantees([node8], DEFAULT_MODEL, [], { room_composites: 99 });
    const after = checkGuarantees([node8], DEFAULT_MODEL, [{ recordings: 10 }], { room_composites: 99 });
    expect(before.ok || after.ok).toBe(false);
    if (!before.ok && !after.ok) expect(after.room).toBeLessThan(before.room);
  });

  it('leaves no room where the pool has no node', () => {
    expect(checkGuarantees([], DEFAULT_MODEL, [], { streams: 1 })).toEqual({ ok: false, cls: 'streams', requested: 1, room: 0 });
  });
});

describe(guardGuarantees.name, () => {
  const allocatable = nodeCapacity(node8, DEFAULT_MODEL).allocatable;
  const stream = DEFAULT_MODEL.costs.stream;

  it('admits work inside the app’s own guarantee even when the rest of the pool is promised', () => {
    const take = guaranteeTake({ streams: 2 }, units, {}, ['streams'], 1);
    const ledger = { allocatable, used: load(allocatable.ramMb - 64, 0, 0), held: load(64, 100, 5_000), runtimeHold: ZERO_LOAD };
    expect(guardGuarantees(ledger, take, stream, ZERO_LOAD)).toEqual({ ok: true, charge: units.streams });
  });

  it('refuses work beyond the app’s guarantee that would take another app’s unused guarantee, naming the resource', () => {
    const take = guaranteeTake({}, units, {}, ['streams'], 1);
    const ledger = { allocatable, used: load(0, 0, allocatable.nicKbps - 4_000), held: load(32, 50, 2_500), runtimeHold: ZERO_LOAD };
    expect(guardGuarantees(ledger, take, stream, ZERO_LOAD)).toEqual({
      ok: false,
      refusal: {
        code: 'capacity_exhausted',
        resource: 'pool.guaranteed',
        heldResource: 'node.nic',
        limit: allocatable.nicKbps - 2_500,
        used: allocatable.nicKbps - 4_000,
        requested: 2_500,
      },
    });
  });

  it('charges work inside a guarantee what the guarantee kept for it', () => {
    const take = guaranteeTake({ recordings: 1 }, units, {}, ['recordings'], 1);
    const track = DEFAULT_MODEL.costs['egress.track'];
    const sut = guardGuarantees({ allocatable, used: ZERO_LOAD, held: units.recordings, runtimeHold: ZERO_LOAD }, take, track, ZERO_LOAD);
    expect(sut).toEqual({ ok: true, charge: units.recordings });
  });
});
