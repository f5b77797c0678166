import type { HourQuantity } from './usage-reader.js';

/** One CloudEvents 1.0 event (structured mode, JSON). */
export type UsageCloudEvent = Readonly<{
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  data: Readonly<{ start: string; end: string; value: number; unit: UsageUnit } & Readonly<Record<string, string | number>>>;
}>;

type UsageUnit = 'minutes' | 'GB-hours' | 'bytes';

/** Each meter's event type suffix, the data field its dimension goes in, and its unit (seconds × weight per unit). */
const SHAPES: Readonly<Record<string, Readonly<{ name: string; label?: string; unit: UsageUnit; per: number }>>> = {
  participant: { name: 'participant_minutes', label: 'role', unit: 'minutes', per: 60 },
  stream: { name: 'stream_minutes', unit: 'minutes', per: 60 },
  recording: { name: 'recording_minutes', label: 'mode', unit: 'minutes', per: 60 },
  ingress: { name: 'ingress_minutes', label: 'kind', unit: 'minutes', per: 60 },
  hls: { name: 'hls_minutes', unit: 'minutes', per: 60 },
  storage: { name: 'storage_gb_hours', unit: 'GB-hours', per: 3600 * 1e9 },
  camera: { name: 'camera_minutes', unit: 'minutes', per: 60 },
  camera_viewer: { name: 'camera_viewer_minutes', unit: 'minutes', per: 60 },
  ladder: { name: 'ladder_minutes', label: 'hardware', unit: 'minutes', per: 60 },
  hls_bytes: { name: 'hls_bytes_served', unit: 'bytes', per: 1 },
};

/**
 * One hour's usage as CloudEvents: `type` = `tally.usage.<meter>`, `subject` = the app id, one event
 * per app, meter and dimension. Ids are derived from what they report, so a re-sent hour carries the
 * same ids and a receiver deduplicates it.
 */
export function usageCloudEvents(hour: Date, quantities: readonly HourQuantity[], source: string): UsageCloudEvent[] {
  const start = hour.toISOString();
  const end = new Date(hour.getTime() + 3_600_000).toISOString();
  return quantities.flatMap((q) => {
    const shape = SHAPES[q.meter];
    if (!shape || q.quantity <= 0) return [];
    const type = `tally.usage.${shape.name}`;
    return [
      {
        specversion: '1.0',
        id: `${q.appId}:${shape.name}:${q.dimension || '-'}:${start}`,
        source,
        type,
        subject: q.appId,
        time: end,
        datacontenttype: 'application/json',
        data: { start, end, value: q.quantity / shape.per, unit: shape.unit, ...(shape.label ? { [shape.label]: q.dimension } : {}) },
      } as const,
    ];
  });
}
