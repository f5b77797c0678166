import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Where the white flashes start in a file's video, in seconds of its own timeline (signalstats, frame
 * by frame). A flash already on at the video's first frame has no start in the file (its beep began
 * before the picture did), so it is not one: counted, it read as the picture up to a flash late. A beep
 * already sounding as the audio begins is not found either (no silence ends before it).
 */
export async function flashOnsets(path: string): Promise<number[]> {
  const { stdout } = await run(
    'ffmpeg',
    [
      '-hide_banner',
      '-copyts',
      '-i',
      path,
      '-an',
      '-vf',
      'signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-',
      '-f',
      'null',
      '-',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const onsets: number[] = [];
  let time: number | undefined;
  // Unknown until the first frame: a video that begins white begins inside a flash.
  let bright: boolean | undefined;
  for (const line of stdout.split('\n')) {
    const frame = /pts_time:([-\d.]+)/.exec(line);
    if (frame?.[1]) time = Number(frame[1]);
    const luma = /YAVG=([\d.]+)/.exec(line);
    if (luma?.[1] === undefined || time === undefined) continue;
    const white = Number(luma[1]) > 128;
    if (white && bright === false) onsets.push(time);
    bright = white;
  }
  return onsets;
}

/** Where the beeps start in a file's audio: the ends of silences (silencedetect), in seconds of its own timeline. */
export async function beepOnsets(path: string): Promise<number[]> {
  const { stderr } = await run(
    'ffmpeg',
    ['-hide_banner', '-copyts', '-i', path, '-vn', '-af', 'silencedetect=noise=-30dB:d=0.1', '-f', 'null', '-'],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return [...stderr.matchAll(/silence_end: ([-\d.]+)/g)].map((m) => Number(m[1]));
}

export type SyncReport = Readonly<{
  /** Audio minus video for each flash that has a beep within half a period, in ms (positive: sound late). */
  offsetsMs: number[];
  p50Ms: number;
  maxAbsMs: number;
  /** The median offset (signed). */
  medianMs: number;
  /** The share of flashes whose offset is within `boundMs` of the median: how steady the gap is along the file. */
  steadyShare(boundMs: number): number;
}>;

/** Pairs every flash with the nearest beep onset and measures how far apart they are. */
export function matchOnsets(flashes: readonly number[], beeps: readonly number[], periodS: number): SyncReport {
  const offsetsMs = flashes.flatMap((flash) => {
    const nearest = beeps.reduce<number | undefined>(
      (best, beep) => (best === undefined || Math.abs(beep - flash) < Math.abs(best - flash) ? beep : best),
      undefined,
    );
    return nearest !== undefined && Math.abs(nearest - flash) < periodS / 2 ? [Math.round((nearest - flash) * 1000)] : [];
  });
  const sorted = offsetsMs.map(Math.abs).sort((a, b) => a - b);
  const medianMs = [...offsetsMs].sort((a, b) => a - b)[Math.floor(offsetsMs.length / 2)] ?? Number.NaN;
  return {
    offsetsMs,
    p50Ms: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
    maxAbsMs: sorted[sorted.length - 1] ?? Number.NaN,
    medianMs,
    steadyShare: (boundMs) =>
      offsetsMs.length === 0 ? 0 : offsetsMs.filter((o) => Math.abs(o - medianMs) <= boundMs).length / offsetsMs.length,
  };
}
