/**
 * Per-app storage and retention rules. A recording's size is unknown until it ends, so the cap is
 * checked against what the app already holds: a start is refused while the app holds at least its
 * cap, and a recording admitted below it may finish above it (bounded by maxRecordingDurationS).
 */

export const BYTES_PER_MB = 1_048_576;

/** An app's settings in effect: its own where set, else the operator's default; undefined means none. */
export type StorageSettings = Readonly<{
  maxStorageMb: number | undefined;
  recordingRetentionDays: number | undefined;
  maxRecordingDurationS: number | undefined;
}>;

type Nullable<T> = { [K in keyof T]: T[K] | null | undefined };

export function storageSettings(own: Nullable<StorageSettings>, defaults: StorageSettings): StorageSettings {
  return {
    maxStorageMb: own.maxStorageMb ?? defaults.maxStorageMb,
    recordingRetentionDays: own.recordingRetentionDays ?? defaults.recordingRetentionDays,
    maxRecordingDurationS: own.maxRecordingDurationS ?? defaults.maxRecordingDurationS,
  };
}

export type StorageRefusal = Readonly<{
  code: 'quota_exceeded';
  resource: 'app.storage';
  /** MB. */
  limit: number;
  /** MB, rounded up to a tenth so that a refusal never shows used < limit. */
  used: number;
  /** MB: a recording's size is not known at its start. */
  requested: 0;
}>;

/** The refusal of a recording start, or undefined when the app may record. */
export function storageRefusal(usedBytes: number, limitMb: number | undefined): StorageRefusal | undefined {
  if (limitMb === undefined || usedBytes < limitMb * BYTES_PER_MB) return undefined;
  return { code: 'quota_exceeded', resource: 'app.storage', limit: limitMb, used: toMb(usedBytes), requested: 0 };
}

/** Bytes in MB to one decimal, rounded up (a byte over the cap is not shown as exactly the cap's MB below it). */
export function toMb(bytes: number): number {
  return Math.ceil((bytes / BYTES_PER_MB) * 10) / 10;
}

/** Recordings that ended before this are past retention; undefined when recordings are kept. */
export function retentionCutoff(now: Date, retentionDays: number | undefined): Date | undefined {
  if (retentionDays === undefined) return undefined;
  return new Date(now.getTime() - retentionDays * 86_400_000);
}

/** Whether a recording that started at `startedAt` has run its maximum by `now`. */
export function pastMaxDuration(startedAt: Date, now: Date, maxDurationS: number | undefined): boolean {
  return maxDurationS !== undefined && now.getTime() - startedAt.getTime() >= maxDurationS * 1000;
}
