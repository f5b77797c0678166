import { join } from 'node:path';
import type { RecordingMode } from '@tally/contracts';

/**
 * Where a recording's file lives. Egress writes into `<dir>/.incoming/<appId>/`, the finaliser moves
 * the checked file to `<dir>/<appId>/`, so the app's directory only ever holds complete recordings.
 * `location` (stored on the row) is relative: `<appId>/<recordingId>.<ext>`, or the object key on S3.
 */
export class RecordingFiles {
  constructor(readonly dir: string) {}

  location(appId: string, recordingId: string, extension: string): string {
    return `${appId}/${recordingId}.${extension}`;
  }

  incomingPath(location: string): string {
    return join(this.dir, '.incoming', location);
  }

  finalPath(location: string): string {
    return join(this.dir, location);
  }
}

/** Composites are always MP4; a track egress keeps the track's codec, so its container follows it. */
export function extensionFor(mode: RecordingMode, trackMimeType?: string): string {
  if (mode !== 'track') return 'mp4';
  const mime = (trackMimeType ?? '').toLowerCase();
  // audio/red is Opus with redundancy; egress writes its Opus payload.
  if (mime.includes('opus') || mime.includes('red')) return 'ogg';
  if (mime.includes('vp8') || mime.includes('vp9') || mime.includes('av1')) return 'webm';
  return 'mp4';
}

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  mp4: 'video/mp4',
  ogg: 'audio/ogg',
  webm: 'video/webm',
};

/**
 * Egress names the file by what it really wrote (a track egress switches the extension to the
 * codec's container), so the stored location follows the name egress reports when only the
 * extension differs.
 */
export function locationWritten(location: string, reported: string | undefined): string {
  const base = location.replace(/\.[a-z0-9]+$/, '');
  const extension = reported?.match(/\.([a-z0-9]+)$/)?.[1];
  if (!reported || !extension || !reported.endsWith(`${base.split('/').pop() ?? ''}.${extension}`)) return location;
  return `${base}.${extension}`;
}
