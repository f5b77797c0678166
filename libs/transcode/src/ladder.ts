/** One rung of a VOD ladder: an H.264 rendition at a height and a target video bitrate. */
export type Rung = Readonly<{ name: string; height: number; bitrateKbps: number }>;

/** A rung sized for one source: the width keeps the source's aspect ratio. */
export type Rendition = Readonly<{ name: string; width: number; height: number; bitrateKbps: number }>;

export type SourceVideo = Readonly<{ width: number; height: number }>;

/** The default ladder, highest first (bitrates as common streaming services use for H.264 at 30 fps). */
export const DEFAULT_LADDER: readonly Rung[] = [
  { name: '1080p', height: 1080, bitrateKbps: 5_000 },
  { name: '720p', height: 720, bitrateKbps: 2_800 },
  { name: '480p', height: 480, bitrateKbps: 1_400 },
  { name: '360p', height: 360, bitrateKbps: 800 },
];

export const AUDIO_BITRATE_KBPS = 128;

/** H.264 with 4:2:0 chroma needs even dimensions. */
function even(value: number): number {
  return Math.max(2, Math.round(value / 2) * 2);
}

/**
 * The renditions a source gets: every rung no taller than the source (never an upscale). A source
 * below the lowest rung gets one rendition at its own size, its bitrate scaled by pixel count.
 */
export function planLadder(source: SourceVideo, ladder: readonly Rung[] = DEFAULT_LADDER): Rendition[] {
  if (!(source.width > 0 && source.height > 0)) throw new RangeError(`source has no video size (${source.width}x${source.height})`);
  const sized = (rung: Rung): Rendition => ({
    name: rung.name,
    width: even((source.width * rung.height) / source.height),
    height: rung.height,
    bitrateKbps: rung.bitrateKbps,
  });
  const fitting = ladder.filter((rung) => rung.height <= source.height).map(sized);
  if (fitting.length > 0) return fitting;
  const lowest = ladder.reduce((a, b) => (b.height < a.height ? b : a));
  const height = even(source.height);
  const scale = (source.width * source.height) / (((lowest.height * 16) / 9) * lowest.height);
  return [{ name: `${height}p`, width: even(source.width), height, bitrateKbps: Math.max(150, Math.round(lowest.bitrateKbps * scale)) }];
}
