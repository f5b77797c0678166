import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BYTES_PER_MB, pastMaxDuration, retentionCutoff, storageRefusal, storageSettings, toMb } from './storage.js';

describe(storageRefusal.name, () => {
  it('lets an app without a cap record whatever it holds', () => {
    expect(storageRefusal(10 * 1024 * BYTES_PER_MB, undefined)).toBeUndefined();
  });

  it('lets an app below its cap start, however close', () => {
    expect(storageRefusal(100 * BYTES_PER_MB - 1, 100)).toBeUndefined();
  });

  it('refuses a start once the app holds its cap, naming app.storage in MB', () => {
    expect(storageRefusal(100 * BYTES_PER_MB, 100)).toEqual({
      code: 'quota_exceeded',
      resource: 'app.storage',
      limit: 100,
      used: 100,
      requested: 0,
    });
    expect(storageRefusal(150 * BYTES_PER_MB + 1, 100)?.used).toBe(150.1);
  });

  it('refuses exactly when the app holds at least its cap, and never shows used below the limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 45 }), fc.integer({ min: 1, max: 10_000_000 }), (used, limitMb) => {
        const sut = storageRefusal(used, limitMb);
        expect(sut !== undefined).toBe(used >= limitMb * BYTES_PER_MB);
        if (sut) expect(sut.used).toBeGreaterThanOrEqual(sut.limit);
      }),
    );
  });
});

describe(toMb.name, () => {
  it('rounds up to a tenth', () => {
    expect(toMb(0)).toBe(0);
    expect(toMb(1)).toBe(0.1);
    expect(toMb(BYTES_PER_MB)).toBe(1);
  });
});

describe(storageSettings.name, () => {
  const defaults = { maxStorageMb: 500, recordingRetentionDays: 30, maxRecordingDurationS: undefined };

  it('takes the app’s own setting, else the operator’s default', () => {
    expect(storageSettings({ maxStorageMb: 10, recordingRetentionDays: null, maxRecordingDurationS: 60 }, defaults)).toEqual({
      maxStorageMb: 10,
      recordingRetentionDays: 30,
      maxRecordingDurationS: 60,
    });
  });
});

describe(retentionCutoff.name, () => {
  it('keeps everything without a retention, and cuts whole days back otherwise', () => {
    const now = new Date('2026-11-28T12:00:00Z');
    expect(retentionCutoff(now, undefined)).toBeUndefined();
    expect(retentionCutoff(now, 7)?.toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });
});

describe(pastMaxDuration.name, () => {
  const start = new Date('2026-11-28T12:00:00Z');
  it('is reached at the limit, not before, and never without one', () => {
    expect(pastMaxDuration(start, new Date('2026-11-28T12:00:29Z'), 30)).toBe(false);
    expect(pastMaxDuration(start, new Date('2026-11-28T12:00:30Z'), 30)).toBe(true);
    expect(pastMaxDuration(start, new Date('2030-01-01T00:00:00Z'), undefined)).toBe(false);
  });
});
