import type { EgressState } from '@tally/livekit';

export const PASSTHROUGH_TRACKS = ['video', 'audio'] as const;
export type PassthroughTrack = (typeof PASSTHROUGH_TRACKS)[number];

/** One Track egress of a passthrough recording, as the lifecycle judges it. */
export type PartState = Readonly<{
  track: PassthroughTrack;
  state: EgressState;
  startedAt: Date | null;
  /**
   * When the egress received its track's first packet (its file result's started_at).
   * Egress reads packets while it builds its pipeline and reports its start once that is built:
   * on a busy host the file begins seconds before `startedAt`.
   */
  mediaStartedAt: Date | null;
  endedAt: Date | null;
  error: string | null;
}>;

/** What a passthrough recording's parts together say about the recording. */
export type PartsVerdict =
  | Readonly<{ kind: 'starting' }>
  | Readonly<{ kind: 'active'; startedAt: Date }>
  | Readonly<{ kind: 'ending'; startedAt: Date }>
  | Readonly<{ kind: 'finished'; startedAt: Date; endedAt: Date }>
  | Readonly<{ kind: 'failed'; reason: string }>
  | Readonly<{ kind: 'cut'; reason: string; startedAt: Date; endedAt: Date; othersDone: boolean }>;

const FINISHED = new Set<EgressState>(['complete', 'limit_reached']);
const WRITING = new Set<string>(['starting', 'active', 'ending']);
/** Egresses whose ends are this close ended together. */
const TOGETHER_MS = 8_000;
const RUNNING = new Set<EgressState>(['active', 'ending', 'complete', 'limit_reached']);

/**
 * One recording from two egresses: it fails as soon as either fails to start (naming which and
 * why), starts once every egress runs (from the first packet either file holds), and finishes only
 * when both have closed their files, so a track that ends early (unpublished) leaves the other
 * recording to the end. An egress that dies while recording (a killed process) cuts the recording
 * there: what both wrote until then is kept.
 */
export function judgeParts(parts: readonly PartState[], now: Date): PartsVerdict {
  const broken = parts.find((p) => p.state === 'failed' || p.state === 'aborted');
  if (broken) {
    const reason = `${broken.track} egress ${broken.state}: ${broken.error ?? 'no reason given'}`;
    const startedAt = earliest(parts.map(fileStart));
    if (!broken.startedAt || !startedAt) return { kind: 'failed', reason };
    const othersDone = parts.every((p) => p === broken || !WRITING.has(p.state));
    return {
      kind: 'cut',
      reason: `${reason}; the file keeps what was recorded until then`,
      startedAt,
      endedAt: broken.endedAt ?? now,
      othersDone,
    };
  }
  if (parts.length === 0 || !parts.every((p) => RUNNING.has(p.state))) return { kind: 'starting' };
  const startedAt = earliest(parts.map(fileStart)) ?? now;
  if (parts.every((p) => FINISHED.has(p.state))) {
    // Tracks that ended together (the publisher left) end the recording at the first end: egress
    // keeps writing silence into the Opus file for seconds after. One that ended early does not.
    const first = earliest(parts.map((p) => p.endedAt));
    const last = latest(parts.map((p) => p.endedAt));
    const together = first && last && last.getTime() - first.getTime() <= TOGETHER_MS;
    return { kind: 'finished', startedAt, endedAt: (together ? first : last) ?? now };
  }
  if (parts.every((p) => p.state !== 'active')) return { kind: 'ending', startedAt };
  return { kind: 'active', startedAt };
}

/** Where a part's file begins: the recording starts where its joined file does. */
function fileStart(part: PartState): Date | null {
  return part.mediaStartedAt ?? part.startedAt;
}

/**
 * `<appId>/<recordingId>.mp4` → `<appId>/<recordingId>.video.<ext>`: where one egress writes its
 * track. A replacement egress (attempt > 0) writes its own file, so the one it replaces cannot be
 * mistaken for it.
 */
export function partLocation(location: string, track: PassthroughTrack, extension: string, attempt = 0): string {
  return `${location.replace(/\.[a-z0-9]+$/, '')}.${track}${attempt > 0 ? `-${attempt}` : ''}.${extension}`;
}

/** The recording, track and attempt a passthrough egress's file path names. */
export function partInPath(
  path: string | undefined,
): Readonly<{ recordingId: string; track: PassthroughTrack; attempt: number }> | undefined {
  const match = path?.match(/(rec_[a-z0-9]{16})\.(video|audio)(?:-(\d+))?\.[a-z0-9]+$/);
  if (!match?.[1] || (match[2] !== 'video' && match[2] !== 'audio')) return undefined;
  return { recordingId: match[1], track: match[2], attempt: Number(match[3] ?? 0) };
}

/**
 * The container a passthrough recording is joined into: WebM for VP8/VP9 (Opus fits it as is), MP4
 * for H.264 (AAC unless the app keeps Opus), OGG when there is only Opus.
 */
export function passthroughExtension(videoMimeType: string | undefined): string {
  if (videoMimeType === undefined) return 'ogg';
  return /h264/i.test(videoMimeType) ? 'mp4' : 'webm';
}

function earliest(dates: readonly (Date | null)[]): Date | undefined {
  const times = dates.flatMap((d) => (d ? [d.getTime()] : []));
  return times.length > 0 ? new Date(Math.min(...times)) : undefined;
}

function latest(dates: readonly (Date | null)[]): Date | undefined {
  const times = dates.flatMap((d) => (d ? [d.getTime()] : []));
  return times.length > 0 ? new Date(Math.max(...times)) : undefined;
}
