import { describe, expect, it } from 'vitest';
import { DEFAULT_DISK_WATERMARK_SETTINGS, diskWatermarks } from './disk-watermarks.js';
import { finalisationBytes, planDiskStop } from './disk-stop.js';

const MB = 1024 * 1024;
const total = 160 * MB;
const { stopFreeBytes } = diskWatermarks(total);
const RESERVE_MAX = 256 * MB;

describe(planDiskStop.name, () => {
  it('leaves writers alone on a roomy filesystem and writes the reserve there', () => {
    const sut = planDiskStop(
      { totalBytes: total, freeBytes: 100 * MB, reserveBytes: 0, pendingBytes: 5 * MB },
      DEFAULT_DISK_WATERMARK_SETTINGS,
      RESERVE_MAX,
    );

    expect(sut).toEqual({ level: 'ok', stopWriters: false, releaseReserve: false, createReserveBytes: stopFreeBytes });
  });

  it('stops the writers and releases the reserve once the joins to come would not fit above the stop watermark', () => {
    const state = { totalBytes: total, freeBytes: stopFreeBytes + 4 * MB, reserveBytes: stopFreeBytes, pendingBytes: 4 * MB };

    const sut = planDiskStop(state, DEFAULT_DISK_WATERMARK_SETTINGS, RESERVE_MAX);

    expect(sut).toMatchObject({ level: 'stop', stopWriters: true, releaseReserve: true });
    // The same free space with less to join still records.
    expect(planDiskStop({ ...state, pendingBytes: 3 * MB }, DEFAULT_DISK_WATERMARK_SETTINGS, RESERVE_MAX).stopWriters).toBe(false);
  });

  it('stops on a disk filled from outside past the watermark in one go', () => {
    const sut = planDiskStop(
      { totalBytes: total, freeBytes: 1 * MB, reserveBytes: stopFreeBytes, pendingBytes: 0 },
      DEFAULT_DISK_WATERMARK_SETTINGS,
      RESERVE_MAX,
    );

    expect(sut.stopWriters && sut.releaseReserve).toBe(true);
  });

  it('never writes the reserve where holding it would stop or warn', () => {
    // Just above the alert watermark: the reserve would take it below.
    const near = planDiskStop(
      { totalBytes: total, freeBytes: 17 * MB, reserveBytes: 0, pendingBytes: 0 },
      DEFAULT_DISK_WATERMARK_SETTINGS,
      RESERVE_MAX,
    );
    const held = planDiskStop(
      { totalBytes: total, freeBytes: 100 * MB, reserveBytes: stopFreeBytes, pendingBytes: 0 },
      DEFAULT_DISK_WATERMARK_SETTINGS,
      RESERVE_MAX,
    );

    expect(near).toMatchObject({ level: 'ok', stopWriters: false, createReserveBytes: 0 });
    expect(held.createReserveBytes).toBe(0);
  });

  it('bounds the reserve, and holds none when the operator sets its bound to 0', () => {
    const state = { totalBytes: 100 * 1024 * MB, freeBytes: 50 * 1024 * MB, reserveBytes: 0, pendingBytes: 0 };

    expect(planDiskStop(state, DEFAULT_DISK_WATERMARK_SETTINGS, RESERVE_MAX).createReserveBytes).toBe(RESERVE_MAX);
    expect(planDiskStop(state, DEFAULT_DISK_WATERMARK_SETTINGS, 0).createReserveBytes).toBe(0);
  });
});

describe(finalisationBytes.name, () => {
  it('counts a passthrough join as a copy of its parts and a composite as its index only', () => {
    expect(finalisationBytes('passthrough', 10 * MB)).toBe(10 * MB);
    expect(finalisationBytes('track_composite', 10 * MB)).toBeLessThanOrEqual(MB / 10 + 1);
  });
});
