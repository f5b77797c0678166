import type { PassthroughTrack } from './passthrough.js';

/** One track's file as the finaliser found it. */
export type JoinInput = Readonly<{
  track: PassthroughTrack;
  path: string;
  /**
   * The instant the file's timestamp 0 stands for: when its egress read the track's first packet
   * (LiveKit's file `started_at`). Egress's own clock, which the two egresses of a pair share.
   */
  zeroAt: Date;
  /**
   * The file's first timestamp (ffprobe `start_time`), seconds: what egress wrote before it was
   * recording is dropped, so a video file often starts later than 0 (by up to the 2 s its jitter
   * buffer holds).
   */
  startS: number;
  /** Seconds of media in the file from its first sample (ffprobe), when known. */
  durationS: number | undefined;
  /** ffprobe's codec name (vp8, vp9, h264, opus). */
  codec: string;
}>;

export type JoinPlan = Readonly<{
  container: 'webm' | 'mp4' | 'ogg';
  /** Seconds each input's first sample is placed at, so that both line up on the earlier one. */
  offsets: Readonly<Partial<Record<PassthroughTrack, number>>>;
  /** The joined file's length: the recording's end, without the silence egress appends to Opus after a stop. */
  durationS: number | undefined;
  audio: 'copy' | 'aac';
}>;

/**
 * How the two files become one without touching the video: each file's first sample is placed at
 * the instant it was received (its zero plus its first timestamp, relative to the earlier of the
 * two), the container follows the video codec, Opus becomes AAC only in an MP4 whose app did not ask
 * to keep Opus, and the result ends where the recording ended.
 *
 * @param endedAt when the recording ended (the stop, or the last track leaving)
 */
export function planJoin(inputs: readonly JoinInput[], endedAt: Date | undefined, keepOpusInMp4: boolean): JoinPlan {
  if (inputs.length === 0) throw new RangeError('nothing to join');
  const firstSampleAt = (i: JoinInput) => i.zeroAt.getTime() / 1000 + trustedStartS(i.startS);
  const t0 = Math.min(...inputs.map(firstSampleAt));
  const offsets = Object.fromEntries(inputs.map((i) => [i.track, round3(firstSampleAt(i) - t0)]));
  const video = inputs.find((i) => i.track === 'video');
  const container = video === undefined ? 'ogg' : video.codec === 'h264' ? 'mp4' : 'webm';
  // Each track lasts what its file holds, shifted by its offset; the recording's end (the stop, or
  // where the tracks ended) cuts what egress wrote after it: the Opus file's trailing silence, and
  // the video an egress kept writing while a stop reached it.
  const ends = inputs.flatMap((i) => (i.durationS === undefined ? [] : [(offsets[i.track] ?? 0) + i.durationS]));
  const recordingEnd = endedAt === undefined ? undefined : endedAt.getTime() / 1000 - t0;
  const longest = ends.length > 0 ? Math.max(...ends) : undefined;
  const durationS =
    recordingEnd !== undefined && recordingEnd > 0 ? (longest === undefined ? recordingEnd : Math.min(longest, recordingEnd)) : longest;
  const audio = container === 'mp4' && !keepOpusInMp4 ? 'aac' : 'copy';
  return { container, offsets, durationS, audio };
}

/**
 * Longest a file's first sample can honestly follow its timestamp 0: what egress drops while it waits
 * for a keyframe (publishers send one every few seconds, and on request) or fills its jitter buffer.
 */
export const MAX_FIRST_SAMPLE_S = 30;

/**
 * A first timestamp further from 0 than that is a jump in the publisher's RTP timestamps, not time
 * that passed: the file's first sample is placed at the instant its egress received the track (its
 * wall-clock zero), so a jump cannot move the track by hours in the joined file.
 */
function trustedStartS(startS: number): number {
  return Number.isFinite(startS) && startS >= 0 && startS <= MAX_FIRST_SAMPLE_S ? startS : 0;
}

function round3(s: number): number {
  return Math.round(s * 1000) / 1000;
}

/**
 * ffmpeg's arguments for a plan: stream copy (audio to AAC where planned), written to `output`.
 * ffmpeg moves each input's first timestamp to 0 before `-itsoffset` applies, so the offset places
 * each file's first sample.
 */
export function joinArgs(inputs: readonly JoinInput[], plan: JoinPlan, output: string): string[] {
  const ordered = [...inputs].sort((a, b) => (a.track === b.track ? 0 : a.track === 'video' ? -1 : 1));
  const args = ['-hide_banner', '-loglevel', 'error', '-y'];
  for (const input of ordered) args.push('-itsoffset', (plan.offsets[input.track] ?? 0).toFixed(3), '-i', input.path);
  ordered.forEach((input, i) => args.push('-map', `${i}:${input.track === 'video' ? 'v' : 'a'}:0`));
  if (ordered.some((i) => i.track === 'video')) args.push('-c:v', 'copy');
  if (ordered.some((i) => i.track === 'audio')) {
    args.push('-c:a', plan.audio === 'aac' ? 'aac' : 'copy');
    if (plan.audio === 'aac') args.push('-b:a', '128k');
  }
  if (plan.durationS !== undefined) args.push('-t', plan.durationS.toFixed(3));
  if (plan.container === 'mp4') args.push('-movflags', '+faststart');
  args.push('-f', plan.container, output);
  return args;
}
