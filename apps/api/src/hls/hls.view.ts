import type { HlsMode, HlsPreset, HlsView } from '@tally/contracts';
import type { HlsSession } from '@tally/db';

export function hlsPlaylistUrl(publicUrl: string, publicId: string): string {
  return `${publicUrl.replace(/\/$/, '')}/hls/${publicId}/index.m3u8`;
}

export function toHlsView(session: HlsSession, publicUrl: string): HlsView {
  return {
    id: session.id,
    appId: session.appId,
    streamId: session.streamId,
    mode: session.mode as HlsMode,
    preset: session.preset as HlsPreset,
    segmentS: session.segmentS,
    audio: session.audio,
    status: session.status,
    playlistUrl: hlsPlaylistUrl(publicUrl, session.publicId),
    error: session.error,
    createdAt: session.createdAt.toISOString(),
    stoppedAt: session.stoppedAt?.toISOString() ?? null,
    purgeAt: session.purgeAt?.toISOString() ?? null,
    purged: session.purgedAt !== null,
  };
}
