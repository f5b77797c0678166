import { type DiskLevel, type DiskWatermarkSettings, diskLevel, diskWatermarks } from './disk-watermarks.js';

/** A filesystem Tally writes media to, as the worker found it. */
export type MediaFilesystemState = Readonly<{
  totalBytes: number;
  /** Free to an unprivileged writer (statfs `bavail`): egress does not run as root. */
  freeBytes: number;
  /** The reserve file the worker holds on it (0 when none). */
  reserveBytes: number;
  /** What finalising the writers on it will still write (passthrough joins copy their parts). */
  pendingBytes: number;
}>;

export type DiskStopPlan = Readonly<{
  level: DiskLevel;
  /** End the writers on the filesystem now (recordings stopped and finalised, live HLS stopped). */
  stopWriters: boolean;
  /** Delete the reserve file, so the finalisation the stop starts has room even on a disk filled from outside. */
  releaseReserve: boolean;
  /** Write the reserve file of this size (0: leave it as it is). */
  createReserveBytes: number;
}>;

/**
 * What the disk watermark check does with one media filesystem. Writers stop while what they
 * recorded can still be finalised above the stop watermark (`pendingBytes` counts the joins to
 * come). The reserve, the size of the stop watermark up to `reserveMaxBytes`, is held as a file: a disk filled from outside
 * (another process, a log) can take the free space the watermark counted on in one go, and
 * releasing the reserve then gives the joins room anyway. It is written again only where that
 * leaves the filesystem clear of both watermarks, so holding it never stops a writer.
 */
export function planDiskStop(state: MediaFilesystemState, settings: DiskWatermarkSettings, reserveMaxBytes: number): DiskStopPlan {
  const marks = diskWatermarks(state.totalBytes, settings);
  const level = diskLevel(state.freeBytes, marks, state.pendingBytes);
  if (level === 'stop') return { level, stopWriters: true, releaseReserve: state.reserveBytes > 0, createReserveBytes: 0 };
  const want = Math.min(marks.stopFreeBytes, Math.max(0, reserveMaxBytes));
  const roomForReserve = want > 0 && state.reserveBytes === 0 && diskLevel(state.freeBytes - want, marks, state.pendingBytes) === 'ok';
  return { level, stopWriters: false, releaseReserve: false, createReserveBytes: roomForReserve ? want : 0 };
}

/**
 * Bytes a recording's finalisation still writes on its filesystem: a passthrough join writes a copy
 * of its track files; a composite or single-track file is moved in place, and only its MP4 index
 * (written when egress closes the file, well under 1 % of it) is still to come.
 */
export function finalisationBytes(mode: string, fileBytes: number): number {
  return mode === 'passthrough' ? fileBytes : Math.ceil(fileBytes / 100);
}
