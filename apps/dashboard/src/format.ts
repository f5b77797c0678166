/** Display helpers: no value is ever shown as "undefined" or "NaN". */

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mm = String(m).padStart(h > 0 ? 2 : 1, '0');
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(s).padStart(2, '0')}`;
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

export function formatMb(mb: number): string {
  return mb >= 1024 ? `${(mb / 1024).toFixed(1)} GB` : `${Math.round(mb)} MB`;
}

export function formatCores(millicores: number): string {
  return `${(millicores / 1000).toFixed(millicores % 1000 === 0 ? 0 : 1)} cores`;
}

export function formatKbps(kbps: number): string {
  return kbps >= 1000 ? `${(kbps / 1000).toFixed(kbps % 1000 === 0 ? 0 : 1)} Mbps` : `${Math.round(kbps)} kbps`;
}

export const QUOTA_LABELS: Readonly<Record<string, string>> = {
  maxStreams: 'Streams',
  maxViewers: 'Viewers',
  maxRecordings: 'Recordings',
  maxRoomComposites: 'Room-composite recordings',
  maxIngresses: 'Ingresses',
  maxTranscodes: 'Transcodes',
  maxCameras: 'Cameras',
  maxCameraViewers: 'Camera viewers',
};

export const FORMAT_LABELS: Readonly<Record<string, string>> = {
  source: 'As sent: VP8/VP9 → WebM, H.264 → MP4 (AAC)',
  source_opus: 'As sent, keeping Opus in the H.264 MP4',
  mp4: 'Always H.264 + AAC MP4 (transcodes VP8/VP9)',
};

export const MODE_LABELS: Readonly<Record<string, string>> = {
  auto: 'Auto (cheapest mode that fits the room)',
  passthrough: 'Passthrough (one publisher as sent, no transcode)',
  track_composite: 'Track composite (one audio + one video transcoded to H.264 MP4)',
  track: 'Track (one raw track, no transcode)',
  room_composite: 'Room composite (Chrome layout, most RAM)',
};
