import type { WorkloadKind } from './costs.js';
import { admissibleDiskBytes, DEFAULT_DISK_WATERMARK_SETTINGS, diskWatermarks, type DiskWatermarkSettings } from './disk-watermarks.js';

/** What Tally writes to a filesystem: several roles on one filesystem are one entry listing them. */
export const DISK_ROLES = ['recordings', 'hls', 'ladders', 'scratch'] as const;
export type DiskRole = (typeof DISK_ROLES)[number];

/**
 * One filesystem of a node as its agent measured it. `key` names it in the ledger: the node and
 * its device, or an operator-given name when several nodes mount the same filesystem, so their
 * reservations share one counter (docs/adr/0021-disk-in-admission.md).
 */
export type NodeDisk = Readonly<{
  key: string;
  roles: readonly DiskRole[];
  totalBytes: number;
  freeBytes: number;
  /** Where it is mounted and which media directories it holds, for people reading gauges. */
  mount?: string;
  dirs?: readonly string[];
}>;

/** How the model sizes what a writer reserves on its filesystem. */
export type DiskModel = Readonly<{
  /** Bytes per second a running unit writes; kinds absent here write nothing Tally admits. */
  writeBytesPerS: Readonly<Partial<Record<WorkloadKind, number>>>;
  /** Extra room to finalise, as a fraction of what the unit writes over the horizon (a passthrough join copies its parts). */
  finaliseFraction: Readonly<Partial<Record<WorkloadKind, number>>>;
  /** Seconds of writing a reservation covers; the agent's measured free space catches up with running writers meanwhile. */
  horizonS: number;
  watermarks: DiskWatermarkSettings;
}>;

export const MB_BYTES = 1024 * 1024;

/** 1.5 Mbit/s, a single publisher (product.md): ~0.7 GB an hour. */
const PUBLISHER_BYTES_PER_S = 1_500_000 / 8;
/** 3 Mbit/s, a 720p30 H.264 composite encode. */
const COMPOSITE_BYTES_PER_S = 3_000_000 / 8;

/**
 * Two minutes: several heartbeats (measured free space catches up with running writers within one),
 * and little enough that a 160 MB recordings filesystem still admits a few single-publisher recordings.
 */
export const DEFAULT_DISK_HORIZON_S = 120;

/**
 * Default write rates; `(est.)` marks figures no measurement confirms. `bench:capacity` reports what
 * each mode wrote on its own synthetic publishers (docs/capacity.md) but does not put it in the
 * profile: a rate is set by the publishers and the encoding options, not by the host.
 */
export const DEFAULT_DISK_MODEL: DiskModel = Object.freeze({
  writeBytesPerS: Object.freeze({
    // The publisher's bitrate written as sent. (est.)
    'egress.passthrough': PUBLISHER_BYTES_PER_S,
    'egress.track': PUBLISHER_BYTES_PER_S,
    // The composite encode's video bitrate, 720p30 (COMPOSITE_ENCODING): a ceiling, since x264
    // undershoots it on simple content (0.5–0.7× on bench:capacity's test card).
    'egress.track_composite': COMPOSITE_BYTES_PER_S,
    'egress.room_composite': COMPOSITE_BYTES_PER_S,
    // A ladder writes its renditions: about two composite encodes' worth of bitrate. (est.)
    'transcode.cpu': 2 * COMPOSITE_BYTES_PER_S,
    'transcode.nvenc': 2 * COMPOSITE_BYTES_PER_S,
  }),
  finaliseFraction: Object.freeze({
    // The join copies the video and audio parts into one file before deleting them.
    'egress.passthrough': 1,
    // The MP4 index written at the end. (est.)
    'egress.track': 0.02,
    'egress.track_composite': 0.02,
    'egress.room_composite': 0.02,
  }),
  horizonS: DEFAULT_DISK_HORIZON_S,
  watermarks: DEFAULT_DISK_WATERMARK_SETTINGS,
});

/** The filesystem role a kind writes to by default; live HLS passes `hls` explicitly (it runs as an egress). */
export function diskRoleOf(kind: WorkloadKind): DiskRole | undefined {
  if (kind.startsWith('egress.')) return 'recordings';
  if (kind.startsWith('transcode.')) return 'ladders';
  return undefined;
}

/** MB (2^20 bytes, rounded up so rounding never over-admits) that `count` units of `kind` reserve. */
export function diskReservationMb(disk: DiskModel, kind: WorkloadKind, count = 1): number {
  const rate = disk.writeBytesPerS[kind] ?? 0;
  if (rate <= 0 || count <= 0) return 0;
  const written = rate * Math.max(0, disk.horizonS);
  const finalise = written * Math.max(0, disk.finaliseFraction[kind] ?? 0);
  return Math.ceil(((written + finalise) * count) / MB_BYTES);
}

/** MB of a filesystem that writers may still be promised: free space above its stop watermark, rounded down. */
export function admissibleDiskMb(disk: Pick<NodeDisk, 'totalBytes' | 'freeBytes'>, settings: DiskWatermarkSettings): number {
  return Math.floor(admissibleDiskBytes(disk.freeBytes, diskWatermarks(disk.totalBytes, settings)) / MB_BYTES);
}

/** The node's filesystem holding `role`, if its agent reported one. */
export function diskFor(disks: readonly NodeDisk[] | undefined, role: DiskRole): NodeDisk | undefined {
  return disks?.find((d) => d.roles.includes(role));
}

export type DiskCheck =
  | Readonly<{ ok: true; key: string; mb: number; limitMb: number }>
  | Readonly<{ ok: false; key: string; limit: number; used: number; requested: number }>
  | undefined;

/**
 * Whether `count` units of `kind` fit on the node's filesystem for `role`, given the MB that running
 * writers already reserve on it. Undefined when the kind writes nothing or the node reports no such
 * filesystem (then there is nothing to measure it against).
 */
export function checkDisk(
  disk: DiskModel,
  disks: readonly NodeDisk[] | undefined,
  reservedMb: (key: string) => number,
  kind: WorkloadKind,
  count: number,
  role: DiskRole | undefined = diskRoleOf(kind),
): DiskCheck {
  const mb = diskReservationMb(disk, kind, count);
  if (mb === 0 || role === undefined) return undefined;
  const fs = diskFor(disks, role);
  if (fs === undefined) return undefined;
  const limitMb = admissibleDiskMb(fs, disk.watermarks);
  const used = reservedMb(fs.key);
  if (used + mb > limitMb) return { ok: false, key: fs.key, limit: limitMb, used, requested: mb };
  return { ok: true, key: fs.key, mb, limitMb };
}

/** A filesystem with the thresholds admission and the watermark stop apply to it, and what writers reserve there. */
export type DiskState = NodeDisk &
  Readonly<{ stopFreeBytes: number; alertFreeBytes: number; admissibleMb: number; reservedMb: number; freeMb: number }>;

/** Each reported filesystem of a node, for gauges, listings and metrics. */
export function diskStates(disks: readonly NodeDisk[] | undefined, disk: DiskModel, reservedMb: (key: string) => number): DiskState[] {
  return (disks ?? []).map((fs) => {
    const { stopFreeBytes, alertFreeBytes } = diskWatermarks(fs.totalBytes, disk.watermarks);
    const admissibleMb = admissibleDiskMb(fs, disk.watermarks);
    const reserved = reservedMb(fs.key);
    return { ...fs, stopFreeBytes, alertFreeBytes, admissibleMb, reservedMb: reserved, freeMb: Math.max(0, admissibleMb - reserved) };
  });
}
