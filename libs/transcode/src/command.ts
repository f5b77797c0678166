import { join } from 'node:path';
import { AUDIO_BITRATE_KBPS, type Rendition } from './ladder.js';

export type Encoder = 'nvenc' | 'x264';

/** HLS segment length; key frames are forced on its boundaries so every rendition switches cleanly. */
export const SEGMENT_S = 4;

export type RenditionCommandInput = Readonly<{
  encoder: Encoder;
  /** NVENC only: decode on the GPU and scale with `scale_cuda`, so frames never leave the GPU. */
  scaleCuda?: boolean;
  source: string;
  outDir: string;
  rendition: Rendition;
}>;

/** Where a rendition's playlist and segments go inside the ladder directory. */
export function playlistName(rendition: Pick<Rendition, 'name'>): string {
  return `${rendition.name}.m3u8`;
}

/**
 * ffmpeg arguments for one rendition as an HLS VOD playlist with its segments. One process per
 * rendition holds one encoder (one NVENC session, or one libx264 encoder), which is the unit the
 * capacity model charges.
 */
export function buildRenditionCommand(input: RenditionCommandInput): string[] {
  const { encoder, rendition, outDir } = input;
  const { width, height, bitrateKbps } = rendition;
  const cuda = encoder === 'nvenc' && input.scaleCuda === true;
  const decode = cuda ? ['-hwaccel', 'cuda', '-hwaccel_output_format', 'cuda'] : [];
  const filter = cuda ? `scale_cuda=${width}:${height}` : `scale=${width}:${height},format=yuv420p`;
  const video =
    encoder === 'nvenc'
      ? ['-c:v', 'h264_nvenc', '-preset', 'p4', '-rc', 'vbr', '-profile:v', 'high']
      : ['-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high'];
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    ...decode,
    '-i',
    input.source,
    '-map',
    '0:v:0',
    '-map',
    '0:a:0?',
    '-vf',
    filter,
    ...video,
    '-b:v',
    `${bitrateKbps}k`,
    '-maxrate',
    `${Math.round(bitrateKbps * 1.1)}k`,
    '-bufsize',
    `${bitrateKbps * 2}k`,
    '-force_key_frames',
    `expr:gte(t,n_forced*${SEGMENT_S})`,
    '-c:a',
    'aac',
    '-b:a',
    `${AUDIO_BITRATE_KBPS}k`,
    '-ac',
    '2',
    '-f',
    'hls',
    '-hls_time',
    String(SEGMENT_S),
    '-hls_playlist_type',
    'vod',
    '-hls_segment_filename',
    join(outDir, `${rendition.name}_%03d.ts`),
    join(outDir, playlistName(rendition)),
  ];
}

/** One command per rendition, highest first. */
export function buildLadderCommands(
  input: Omit<RenditionCommandInput, 'rendition'> & Readonly<{ renditions: readonly Rendition[] }>,
): string[][] {
  const { renditions, ...rest } = input;
  return renditions.map((rendition) => buildRenditionCommand({ ...rest, rendition }));
}
