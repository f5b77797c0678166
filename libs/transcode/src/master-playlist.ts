import { playlistName } from './command.js';
import { AUDIO_BITRATE_KBPS, type Rendition } from './ladder.js';

export const MASTER_PLAYLIST = 'master.m3u8';

/** The HLS master playlist naming each rendition's playlist, highest first. */
export function masterPlaylist(renditions: readonly Rendition[], hasAudio: boolean): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3'];
  for (const r of [...renditions].sort((a, b) => b.height - a.height)) {
    const bandwidth = (r.bitrateKbps + (hasAudio ? AUDIO_BITRATE_KBPS : 0)) * 1_000;
    const codecs = hasAudio ? 'avc1.640028,mp4a.40.2' : 'avc1.640028';
    lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth},RESOLUTION=${r.width}x${r.height},CODECS="${codecs}"`, playlistName(r));
  }
  return `${lines.join('\n')}\n`;
}

export const LADDER_CONTENT_TYPES: Readonly<Record<string, string>> = {
  m3u8: 'application/vnd.apple.mpegurl',
  ts: 'video/mp2t',
};
