/**
 * Where a filesystem that holds media stops taking writes. Both thresholds are free space, in
 * bytes, and scale with the filesystem (a fraction of its size) within bounds an operator sets,
 * so a 160 MB recordings filesystem records until its last few MB and a 4 TB one keeps a few GB.
 *
 * - `stopFreeBytes`: below it, writers on the filesystem are ended gracefully (recordings stopped
 *   and finalised, live HLS stopped) and nothing new that writes there is admitted.
 * - `alertFreeBytes`: below it, the operator is warned (`TallyNodeDiskLow`) while writers go on.
 */
export type DiskWatermarkSettings = Readonly<{
  /** Fraction of the filesystem's size kept free by the stop watermark (0.02 = 2 %). */
  stopFreeFraction: number;
  stopFreeMinBytes: number;
  stopFreeMaxBytes: number;
  /** Fraction of the filesystem's size below which the alert fires (0.10 = 10 %). */
  alertFreeFraction: number;
  alertFreeMaxBytes: number;
}>;

export type DiskWatermarks = Readonly<{ stopFreeBytes: number; alertFreeBytes: number }>;

const MB = 1024 * 1024;

export const DEFAULT_DISK_WATERMARK_SETTINGS: DiskWatermarkSettings = Object.freeze({
  stopFreeFraction: 0.02,
  stopFreeMinBytes: 2 * MB,
  stopFreeMaxBytes: 2048 * MB,
  alertFreeFraction: 0.1,
  alertFreeMaxBytes: 20 * 1024 * MB,
});

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}

/** The watermarks of a filesystem of `totalBytes`; the alert always fires before writers stop. */
export function diskWatermarks(totalBytes: number, settings: DiskWatermarkSettings = DEFAULT_DISK_WATERMARK_SETTINGS): DiskWatermarks {
  const size = Math.max(0, totalBytes);
  const stopFreeBytes = Math.round(clamp(size * settings.stopFreeFraction, settings.stopFreeMinBytes, settings.stopFreeMaxBytes));
  const alertFreeBytes = Math.round(Math.max(stopFreeBytes * 2, Math.min(size * settings.alertFreeFraction, settings.alertFreeMaxBytes)));
  return { stopFreeBytes, alertFreeBytes };
}

export type DiskLevel = 'ok' | 'low' | 'stop';

/**
 * How full a filesystem is against its watermarks. `pendingBytes` is what finalising the writers
 * already on it will still write (a passthrough join copies its parts into one file), so writers
 * stop while that still fits above the stop watermark.
 */
export function diskLevel(freeBytes: number, watermarks: DiskWatermarks, pendingBytes = 0): DiskLevel {
  const effectiveFree = freeBytes - Math.max(0, pendingBytes);
  if (effectiveFree <= watermarks.stopFreeBytes) return 'stop';
  if (effectiveFree <= watermarks.alertFreeBytes) return 'low';
  return 'ok';
}

/** Bytes a filesystem can still promise to new writers: free space above the stop watermark. */
export function admissibleDiskBytes(freeBytes: number, watermarks: DiskWatermarks, pendingBytes = 0): number {
  return Math.max(0, freeBytes - Math.max(0, pendingBytes) - watermarks.stopFreeBytes);
}
