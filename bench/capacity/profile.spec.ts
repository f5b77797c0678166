import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCapacityModel } from '@tally/admission';
import { DEFAULT_MODEL, DEFAULT_NODE_BUDGET, defaultLimits, diskReservationMb } from '@tally/capacity';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProfile, recordingsThatFit, writeProfile, type CapacityMeasurements } from './profile.js';

const measured: CapacityMeasurements = {
  host: 'bench host (2 cores, 7.8 GB)',
  measuredAt: '2026-11-22T20:00:00.000Z',
  baseLoad: { livekitServer: { ramMb: 41.2, cpuMillicores: 7.5 }, api: { ramMb: 150.4, cpuMillicores: 3 } },
  egressIdle: { ramMb: 58.3, cpuMillicores: 4 },
  costs: {
    'egress.room_composite': { ramMb: 702.6, cpuMillicores: 810.2 },
    'egress.track_composite': { ramMb: 171.1, cpuMillicores: 190 },
    'egress.track': { ramMb: 74, cpuMillicores: 20 },
    'viewer.webrtc': { ramMb: 1.2, cpuMillicores: 6, nicKbps: 910.4 },
  },
  diskWriteBytesPerS: { 'egress.passthrough': 101_250.4, 'egress.room_composite': 260_000 },
};

describe(buildProfile.name, () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('writes a profile that TALLY_CAPACITY_PROFILE loads, with the measured costs rounded up', () => {
    dir = mkdtempSync(join(tmpdir(), 'tally-profile-'));
    const path = join(dir, 'capacity-profile.json');
    writeProfile(path, buildProfile(measured));

    const sut = loadCapacityModel(path);

    expect(sut.costs['egress.room_composite']).toMatchObject({ ramMb: 703, cpuMillicores: 811 });
    expect(sut.costs['viewer.webrtc']).toMatchObject({ ramMb: 2, cpuMillicores: 6, nicKbps: 911 });
    expect(sut.runtimes.egress).toEqual({ ramMb: 59, cpuMillicores: 4, nicKbps: DEFAULT_MODEL.runtimes.egress.nicKbps });
    expect(sut.baseLoad.api).toMatchObject({ ramMb: 151, cpuMillicores: 3 });
    // What was not measured keeps its default.
    expect(sut.baseLoad.system).toEqual(DEFAULT_MODEL.baseLoad.system);
    expect(sut.costs['transcode.cpu']).toEqual(DEFAULT_MODEL.costs['transcode.cpu']);
  });

  it('puts the measured write rates in the profile, so they replace the default rates of those modes', () => {
    dir = mkdtempSync(join(tmpdir(), 'tally-profile-'));
    const path = join(dir, 'capacity-profile.json');
    writeProfile(path, buildProfile(measured));

    const sut = loadCapacityModel(path);

    expect(sut.disk.writeBytesPerS['egress.passthrough']).toBe(101_251);
    expect(sut.disk.writeBytesPerS['egress.room_composite']).toBe(260_000);
    expect(sut.disk.writeBytesPerS['egress.track']).toBe(DEFAULT_MODEL.disk.writeBytesPerS['egress.track']);
    expect(diskReservationMb(sut.disk, 'egress.passthrough')).toBeLessThan(diskReservationMb(DEFAULT_MODEL.disk, 'egress.passthrough'));
  });

  it('changes how many recordings fit and the quotas every app is given', () => {
    dir = mkdtempSync(join(tmpdir(), 'tally-profile-'));
    const path = join(dir, 'capacity-profile.json');
    const sut = writeProfile(path, buildProfile(measured));

    expect(recordingsThatFit(DEFAULT_MODEL)['egress.room_composite']).toBe(4);
    // RAM: 8192 − 1741 base − 59 idle egress = 6392 MB left, / 703 MB = 9 (CPU allows 9 too).
    expect(recordingsThatFit(sut)['egress.room_composite']).toBe(9);
    const before = defaultLimits([DEFAULT_NODE_BUDGET]);
    const after = defaultLimits([DEFAULT_NODE_BUDGET], 'auto', { model: loadCapacityModel(path) });
    expect(after.room_composites).toBeGreaterThan(before.room_composites);
  });
});
