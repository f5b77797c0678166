import { describe, expect, it } from 'vitest';
import { buildLadderCommands, buildRenditionCommand } from './command.js';
import { planLadder } from './ladder.js';
import { masterPlaylist } from './master-playlist.js';

const rendition = { name: '720p', width: 1280, height: 720, bitrateKbps: 2_800 };
const base = { source: '/rec/app/rec.mp4', outDir: '/rec/app/rec.ladder', rendition };

/** The value following `flag` in an argument list. */
const valueOf = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

describe(buildRenditionCommand.name, () => {
  it('encodes with libx264 and scales on the CPU', () => {
    const args = buildRenditionCommand({ ...base, encoder: 'x264' });
    expect(valueOf(args, '-c:v')).toBe('libx264');
    expect(valueOf(args, '-vf')).toBe('scale=1280:720,format=yuv420p');
    expect(args).not.toContain('-hwaccel');
    expect(valueOf(args, '-b:v')).toBe('2800k');
  });

  it('encodes with h264_nvenc, decoding and scaling on the GPU when scale_cuda is there', () => {
    const args = buildRenditionCommand({ ...base, encoder: 'nvenc', scaleCuda: true });
    expect(valueOf(args, '-c:v')).toBe('h264_nvenc');
    expect(valueOf(args, '-hwaccel')).toBe('cuda');
    expect(valueOf(args, '-hwaccel_output_format')).toBe('cuda');
    expect(args.indexOf('-hwaccel')).toBeLessThan(args.indexOf('-i'));
    expect(valueOf(args, '-vf')).toBe('scale_cuda=1280:720');
  });

  it('encodes with h264_nvenc from CPU-scaled frames when scale_cuda is missing', () => {
    const args = buildRenditionCommand({ ...base, encoder: 'nvenc', scaleCuda: false });
    expect(valueOf(args, '-c:v')).toBe('h264_nvenc');
    expect(args).not.toContain('-hwaccel');
    expect(valueOf(args, '-vf')).toBe('scale=1280:720,format=yuv420p');
  });

  it('ignores scale_cuda for libx264', () => {
    const args = buildRenditionCommand({ ...base, encoder: 'x264', scaleCuda: true });
    expect(args).not.toContain('-hwaccel');
    expect(valueOf(args, '-vf')).toBe('scale=1280:720,format=yuv420p');
  });

  it('writes an HLS VOD playlist with its segments into the ladder directory', () => {
    const args = buildRenditionCommand({ ...base, encoder: 'x264' });
    expect(valueOf(args, '-f')).toBe('hls');
    expect(valueOf(args, '-hls_playlist_type')).toBe('vod');
    expect(valueOf(args, '-hls_segment_filename')).toBe('/rec/app/rec.ladder/720p_%03d.ts');
    expect(args.at(-1)).toBe('/rec/app/rec.ladder/720p.m3u8');
    expect(valueOf(args, '-i')).toBe('/rec/app/rec.mp4');
    // Audio is optional: an audio-less recording still transcodes.
    expect(args).toContain('0:a:0?');
  });
});

describe(buildLadderCommands.name, () => {
  it('makes one command per rendition, never above the source size', () => {
    const renditions = planLadder({ width: 854, height: 480 });
    const commands = buildLadderCommands({ encoder: 'x264', source: '/s.mp4', outDir: '/o', renditions });
    expect(commands.map((c) => c.at(-1))).toEqual(['/o/480p.m3u8', '/o/360p.m3u8']);
  });
});

describe(masterPlaylist.name, () => {
  it('lists each rendition with its bandwidth and resolution, highest first', () => {
    const text = masterPlaylist(planLadder({ width: 1280, height: 720 }).reverse(), true);
    expect(text).toBe(
      [
        '#EXTM3U',
        '#EXT-X-VERSION:3',
        '#EXT-X-STREAM-INF:BANDWIDTH=2928000,RESOLUTION=1280x720,CODECS="avc1.640028,mp4a.40.2"',
        '720p.m3u8',
        '#EXT-X-STREAM-INF:BANDWIDTH=1528000,RESOLUTION=854x480,CODECS="avc1.640028,mp4a.40.2"',
        '480p.m3u8',
        '#EXT-X-STREAM-INF:BANDWIDTH=928000,RESOLUTION=640x360,CODECS="avc1.640028,mp4a.40.2"',
        '360p.m3u8',
        '',
      ].join('\n'),
    );
  });

  it('leaves the audio codec out for a silent source', () => {
    expect(masterPlaylist([rendition], false)).toContain('BANDWIDTH=2800000,RESOLUTION=1280x720,CODECS="avc1.640028"');
  });
});
