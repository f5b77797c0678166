import { describe, expect, it } from 'vitest';
import { admissibleDiskBytes, DEFAULT_DISK_WATERMARK_SETTINGS, diskLevel, diskWatermarks } from './disk-watermarks.js';

const MB = 1024 * 1024;
const GB = 1024 * MB;

describe(diskWatermarks.name, () => {
  it('lets a 160 MB filesystem record until its last few MB', () => {
    const sut = diskWatermarks(160 * MB);
    expect(sut.stopFreeBytes).toBeGreaterThanOrEqual(2 * MB);
    expect(sut.stopFreeBytes).toBeLessThanOrEqual(4 * MB);
    expect(sut.alertFreeBytes).toBe(16 * MB);
  });

  it('keeps a bounded few GB on a large disk and alerts earlier than it stops', () => {
    const sut = diskWatermarks(4096 * GB);
    expect(sut.stopFreeBytes).toBe(DEFAULT_DISK_WATERMARK_SETTINGS.stopFreeMaxBytes);
    expect(sut.alertFreeBytes).toBe(DEFAULT_DISK_WATERMARK_SETTINGS.alertFreeMaxBytes);
    expect(sut.alertFreeBytes).toBeGreaterThan(sut.stopFreeBytes);
  });

  it('alerts before it stops even when the operator sets the alert below the stop', () => {
    const sut = diskWatermarks(100 * GB, { ...DEFAULT_DISK_WATERMARK_SETTINGS, alertFreeFraction: 0.001 });
    expect(sut.alertFreeBytes).toBe(sut.stopFreeBytes * 2);
  });
});

describe(diskLevel.name, () => {
  const marks = { stopFreeBytes: 4 * MB, alertFreeBytes: 16 * MB };

  it('stops writers while what their finalisation writes still fits', () => {
    expect(diskLevel(50 * MB, marks)).toBe('ok');
    expect(diskLevel(10 * MB, marks)).toBe('low');
    expect(diskLevel(3 * MB, marks)).toBe('stop');
    expect(diskLevel(10 * MB, marks, 7 * MB)).toBe('stop');
  });

  it('promises new writers only the space above the stop watermark and pending joins', () => {
    expect(admissibleDiskBytes(50 * MB, marks, 6 * MB)).toBe(40 * MB);
    expect(admissibleDiskBytes(3 * MB, marks)).toBe(0);
  });
});
