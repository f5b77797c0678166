import { z } from 'zod';
import { AppId, HlsSessionId, StreamId } from './ids.js';

/** standard: 2 s segments (or `segmentS`); low_latency: 1 s segments with a keyframe every second. */
export const HlsPreset = z.enum(['standard', 'low_latency']);
export type HlsPreset = z.infer<typeof HlsPreset>;

export const HlsStatus = z.enum(['starting', 'live', 'stopped', 'failed']);
export type HlsStatus = z.infer<typeof HlsStatus>;

export const HlsMode = z.enum(['track_composite', 'room_composite']);
export type HlsMode = z.infer<typeof HlsMode>;

export const StartHlsBody = z
  .strictObject({
    preset: HlsPreset.default('standard'),
    /** Segment length in seconds for the standard preset (default 2). */
    segmentS: z.number().int().min(1).max(10).optional(),
    /** false leaves the sound out (video-only renditions, e.g. cameras without a microphone). */
    audio: z.boolean().default(true),
  })
  .meta({ id: 'StartHlsBody' });
export type StartHlsBody = z.infer<typeof StartHlsBody>;

/** The segment length a request asks for. */
export function hlsSegmentS(body: StartHlsBody): number {
  return body.preset === 'low_latency' ? 1 : (body.segmentS ?? 2);
}

export const HlsView = z
  .object({
    id: HlsSessionId,
    appId: AppId,
    streamId: StreamId,
    /** track_composite for one publisher, room_composite otherwise. */
    mode: HlsMode,
    preset: HlsPreset,
    segmentS: z.number().int(),
    audio: z.boolean(),
    /** starting until the first playlist is written, live while egress runs, stopped (segments kept until purgeAt), failed. */
    status: HlsStatus,
    /**
     * Public, for a CDN pull zone: `/hls/{publicId}/index.m3u8`, where publicId is 128 random bits of
     * this session's own (nothing else, room names included, leads to it); a new session has a new URL.
     */
    playlistUrl: z.string(),
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
    stoppedAt: z.iso.datetime().nullable(),
    /** When the segments are deleted (retention after stop). */
    purgeAt: z.iso.datetime().nullable(),
    purged: z.boolean(),
  })
  .meta({ id: 'HlsSession' });
export type HlsView = z.infer<typeof HlsView>;

export const HlsFileParams = z.object({
  /**
   * The session's public id (32 hex digits, 128 random bits). Any other path segment is a playlist
   * that does not exist (404), so a path that names a room, an app or a stream reveals nothing.
   */
  publicId: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be a playlist id'),
  file: z.string().regex(/^[A-Za-z0-9_-]{1,100}\.(m3u8|ts|m4s|mp4)$/, 'must be a playlist or segment name'),
});
export type HlsFileParams = z.infer<typeof HlsFileParams>;

/** The HLS session whose egress writes under this path (egress requests carry the playlist path). */
export function hlsSessionIdInPath(path: string | undefined): string | undefined {
  return path?.match(/\/(hls_[a-z0-9]{16})\/[^/]+\.m3u8$/)?.[1];
}
