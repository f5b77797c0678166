import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_BUDGET } from './budget.js';
import { DEFAULT_MODEL } from './model.js';
import { maxConcurrent } from './pool.js';
import { parseCapacityProfile } from './profile.js';

describe(parseCapacityProfile.name, () => {
  it('replaces only the figures a profile names', () => {
    const sut = parseCapacityProfile({ version: 1, costs: { 'egress.room_composite': { ramMb: 1_600 } } });
    if (!sut.ok) throw new Error(sut.issues.join('; '));
    expect(sut.model.costs['egress.room_composite']).toEqual({ ...DEFAULT_MODEL.costs['egress.room_composite'], ramMb: 1_600 });
    expect(sut.model.costs['egress.track']).toEqual(DEFAULT_MODEL.costs['egress.track']);
    expect(sut.model.baseLoad).toEqual(DEFAULT_MODEL.baseLoad);
  });

  it('changes the derived capacity with the measured figures', () => {
    const sut = parseCapacityProfile({ version: 1, baseLoad: { system: { ramMb: 2_500 } }, runtimes: { egress: { ramMb: 400 } } });
    if (!sut.ok) throw new Error(sut.issues.join('; '));
    expect(maxConcurrent('egress.room_composite', DEFAULT_NODE_BUDGET, sut.model)).toBe(3);
  });

  it('accepts an empty profile as the defaults', () => {
    expect(parseCapacityProfile({ version: 1 })).toMatchObject({ ok: true, model: DEFAULT_MODEL });
  });

  it.each([
    [{ version: 2 }, 'version'],
    [{ version: 1, costs: { 'egress.web': { ramMb: 1 } } }, 'costs'],
    [{ version: 1, costs: { stream: { ramMb: -5 } } }, 'costs.stream.ramMb'],
    [{ version: 1, baseLoad: { system: { gpuMb: 1 } } }, 'baseLoad.system'],
    [{ version: 1, costs: { 'camera.mjpeg': { ramMb: 0, cpuMillicores: 0, nicKbps: 0 } } }, 'costs.camera.mjpeg'],
  ])('rejects %o, naming %s', (input, path) => {
    const sut = parseCapacityProfile(input);
    expect(sut.ok).toBe(false);
    expect(!sut.ok && sut.issues.join('\n')).toContain(path);
  });
});
