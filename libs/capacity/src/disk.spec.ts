import { describe, expect, it } from 'vitest';
import { admit, fits, release, type PoolState } from './admission.js';
import { unlimited } from './app-limits.js';
import { DEFAULT_NODE_BUDGET, type NodeBudget } from './budget.js';
import { admissibleDiskMb, checkDisk, DEFAULT_DISK_MODEL, diskReservationMb, MB_BYTES, type NodeDisk } from './disk.js';
import { DEFAULT_DISK_WATERMARK_SETTINGS, diskWatermarks } from './disk-watermarks.js';
import { DEFAULT_MODEL } from './model.js';
import { parseCapacityProfile } from './profile.js';
import { EMPTY_USAGE } from './usage.js';

const MB = MB_BYTES;
const GB = 1024 * MB;

function nodeWith(disk: Partial<NodeDisk> & Pick<NodeDisk, 'totalBytes' | 'freeBytes'>): NodeBudget {
  return { ...DEFAULT_NODE_BUDGET, disks: [{ key: 'origin:8:1', roles: ['recordings', 'hls', 'ladders', 'scratch'], ...disk }] };
}

describe(diskReservationMb.name, () => {
  it('reserves two minutes of a passthrough publisher plus the join that copies it', () => {
    // 1.5 Mbit/s × 120 s = 22.5 MB written (≈ 21.5 MiB), twice for the join.
    expect(diskReservationMb(DEFAULT_DISK_MODEL, 'egress.passthrough')).toBe(Math.ceil((2 * 187_500 * 120) / MB));
    expect(diskReservationMb(DEFAULT_DISK_MODEL, 'egress.passthrough')).toBe(43);
  });

  it('charges a composite at its encode bitrate plus its index, per unit', () => {
    const one = diskReservationMb(DEFAULT_DISK_MODEL, 'egress.room_composite');
    expect(one).toBe(Math.ceil((375_000 * 120 * 1.02) / MB));
    expect(diskReservationMb(DEFAULT_DISK_MODEL, 'egress.room_composite', 3)).toBe(Math.ceil((3 * 375_000 * 120 * 1.02) / MB));
  });

  it('reserves nothing for workloads that write nothing to disk', () => {
    expect(diskReservationMb(DEFAULT_DISK_MODEL, 'stream')).toBe(0);
    expect(diskReservationMb(DEFAULT_DISK_MODEL, 'viewer.webrtc')).toBe(0);
  });

  it('grows with the horizon', () => {
    const short = diskReservationMb({ ...DEFAULT_DISK_MODEL, horizonS: 60 }, 'egress.track');
    const long = diskReservationMb({ ...DEFAULT_DISK_MODEL, horizonS: 3_600 }, 'egress.track');
    expect(long).toBeGreaterThan(50 * short);
  });
});

describe(admissibleDiskMb.name, () => {
  it('is the free space above the stop watermark', () => {
    const total = 160 * MB;
    const stop = diskWatermarks(total).stopFreeBytes;
    expect(admissibleDiskMb({ totalBytes: total, freeBytes: 100 * MB }, DEFAULT_DISK_WATERMARK_SETTINGS)).toBe(
      Math.floor((100 * MB - stop) / MB),
    );
  });

  it('is 0 once free space is under the stop watermark', () => {
    expect(admissibleDiskMb({ totalBytes: 160 * MB, freeBytes: 1 * MB }, DEFAULT_DISK_WATERMARK_SETTINGS)).toBe(0);
  });
});

describe(checkDisk.name, () => {
  const disks: NodeDisk[] = [
    { key: 'n1:8:1', roles: ['recordings'], totalBytes: 100 * GB, freeBytes: 50 * GB },
    { key: 'n1:8:2', roles: ['hls'], totalBytes: 160 * MB, freeBytes: 32 * MB },
  ];

  it('checks the filesystem of the role the workload writes to', () => {
    expect(checkDisk(DEFAULT_DISK_MODEL, disks, () => 0, 'egress.passthrough', 1)).toMatchObject({ ok: true, key: 'n1:8:1' });
    expect(checkDisk(DEFAULT_DISK_MODEL, disks, () => 0, 'egress.passthrough', 1, 'hls')).toMatchObject({ ok: false, key: 'n1:8:2' });
  });

  it('counts what running writers reserve', () => {
    const limit = admissibleDiskMb(disks[0]!, DEFAULT_DISK_WATERMARK_SETTINGS);
    const mb = diskReservationMb(DEFAULT_DISK_MODEL, 'egress.passthrough');
    expect(checkDisk(DEFAULT_DISK_MODEL, disks, () => limit - mb, 'egress.passthrough', 1)).toMatchObject({ ok: true });
    expect(checkDisk(DEFAULT_DISK_MODEL, disks, () => limit - mb + 1, 'egress.passthrough', 1)).toEqual({
      ok: false,
      key: 'n1:8:1',
      limit,
      used: limit - mb + 1,
      requested: mb,
    });
  });

  it('has nothing to say when the node reports no filesystem for the role or the kind writes nothing', () => {
    expect(checkDisk(DEFAULT_DISK_MODEL, undefined, () => 0, 'egress.track', 1)).toBeUndefined();
    expect(checkDisk(DEFAULT_DISK_MODEL, disks, () => 0, 'transcode.cpu', 1)).toBeUndefined();
    expect(checkDisk(DEFAULT_DISK_MODEL, disks, () => 0, 'stream', 1)).toBeUndefined();
  });
});

describe('disk in admission', () => {
  const limits = unlimited();

  it('refuses a recording on a 32 MB filesystem as node.disk, naming limit, used and requested in MB', () => {
    const node = nodeWith({ totalBytes: 32 * MB, freeBytes: 30 * MB });
    const sut = fits({ nodes: [node], model: DEFAULT_MODEL, usage: EMPTY_USAGE }, { appId: 'a', limits, kind: 'egress.passthrough' });
    expect(sut).toEqual({
      ok: false,
      refusal: {
        code: 'capacity_exhausted',
        resource: 'node.disk',
        limit: admissibleDiskMb(node.disks![0]!, DEFAULT_DISK_WATERMARK_SETTINGS),
        used: 0,
        requested: diskReservationMb(DEFAULT_DISK_MODEL, 'egress.passthrough'),
        nodeId: 'origin',
      },
    });
  });

  it('admits writers until their reservations fill the admissible space, and a release gives it back', () => {
    const node = nodeWith({ totalBytes: 10 * GB, freeBytes: 1 * GB });
    const mb = diskReservationMb(DEFAULT_DISK_MODEL, 'egress.passthrough');
    const room = Math.floor(admissibleDiskMb(node.disks![0]!, DEFAULT_DISK_WATERMARK_SETTINGS) / mb);
    let pool: PoolState = { nodes: [node], model: DEFAULT_MODEL, usage: EMPTY_USAGE };
    const held = [];
    for (let i = 0; i < room; i += 1) {
      const result = admit(pool, { appId: 'a', limits, kind: 'egress.passthrough' });
      if (!result.ok) throw new Error(`refused after ${i}: ${result.refusal.resource}`);
      expect(result.placement.disk).toMatchObject({ key: 'origin:8:1', mb });
      held.push(result.placement.reservation);
      pool = { ...pool, usage: result.usage };
    }
    expect(pool.usage.disks?.['origin:8:1']).toBe(room * mb);
    const refused = fits(pool, { appId: 'a', limits, kind: 'egress.passthrough' });
    expect(refused.ok ? undefined : refused.refusal.resource).toBe('node.disk');
    pool = { ...pool, usage: release(pool, held[0]!) };
    expect(fits(pool, { appId: 'a', limits, kind: 'egress.passthrough' }).ok).toBe(true);
  });

  it('charges work that already runs past the limit when its reservation is restored', () => {
    const node = nodeWith({ totalBytes: 32 * MB, freeBytes: 30 * MB });
    const pool: PoolState = { nodes: [node], model: DEFAULT_MODEL, usage: EMPTY_USAGE };
    const sut = admit(pool, { appId: 'a', limits, kind: 'egress.passthrough', restoring: true });
    if (!sut.ok) throw new Error(sut.refusal.resource);
    expect(sut.usage.disks?.['origin:8:1']).toBe(diskReservationMb(DEFAULT_DISK_MODEL, 'egress.passthrough'));
    expect(fits({ ...pool, usage: sut.usage }, { appId: 'a', limits, kind: 'egress.track' }).ok).toBe(false);
  });

  it('leaves work that writes nothing alone on a full disk', () => {
    const node = nodeWith({ totalBytes: 64 * MB, freeBytes: 0 });
    expect(fits({ nodes: [node], model: DEFAULT_MODEL, usage: EMPTY_USAGE }, { appId: 'a', limits, kind: 'stream' }).ok).toBe(true);
  });

  it('lets a 160 MB recordings filesystem take three passthrough recordings at the defaults', () => {
    let pool: PoolState = { nodes: [nodeWith({ totalBytes: 160 * MB, freeBytes: 159 * MB })], model: DEFAULT_MODEL, usage: EMPTY_USAGE };
    for (let i = 0; i < 3; i += 1) {
      const result = admit(pool, { appId: 'a', limits, kind: 'egress.passthrough' });
      if (!result.ok) throw new Error(`refused after ${i}: ${result.refusal.resource}`);
      pool = { ...pool, usage: result.usage };
    }
    expect(fits(pool, { appId: 'a', limits, kind: 'egress.passthrough' }).ok).toBe(false);
  });

  it('takes the write rates a capacity profile measured', () => {
    const profile = parseCapacityProfile({ version: 1, diskWriteBytesPerS: { 'egress.passthrough': 10_000 } });
    if (!profile.ok) throw new Error(profile.issues.join());
    expect(profile.model.disk.writeBytesPerS['egress.passthrough']).toBe(10_000);
    expect(profile.model.disk.writeBytesPerS['egress.room_composite']).toBe(DEFAULT_DISK_MODEL.writeBytesPerS['egress.room_composite']);
    const node = nodeWith({ totalBytes: 32 * MB, freeBytes: 30 * MB });
    expect(fits({ nodes: [node], model: profile.model, usage: EMPTY_USAGE }, { appId: 'a', limits, kind: 'egress.passthrough' }).ok).toBe(
      true,
    );
  });
});
