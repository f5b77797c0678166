import type { MeteringGranularity, UsageTotals } from '@tally/contracts';

/** What an interval meters (docs/adr/0028-usage-metering.md). */
export type Meter =
  'participant' | 'stream' | 'recording' | 'ingress' | 'hls' | 'storage' | 'camera' | 'camera_viewer' | 'ladder' | 'hls_bytes';

/** Seconds × weight of one meter and dimension over some span. */
export type Quantity = Readonly<{ meter: string; dimension: string; quantity: number }>;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const GB = 1e9;

export function granularityMs(granularity: MeteringGranularity): number {
  return granularity === 'hour' ? HOUR_MS : DAY_MS;
}

export function floorTo(at: Date, stepMs: number): Date {
  return new Date(Math.floor(at.getTime() / stepMs) * stepMs);
}

export function ceilTo(at: Date, stepMs: number): Date {
  return new Date(Math.ceil(at.getTime() / stepMs) * stepMs);
}

export const floorHour = (at: Date): Date => floorTo(at, HOUR_MS);

/** Seconds of [start, end ?? now) inside [from, to); 0 when they do not meet or the start is unknown. */
export function overlapSeconds(start: Date | null, end: Date | null, from: Date, to: Date, now: Date): number {
  if (!start) return 0;
  const a = Math.max(start.getTime(), from.getTime());
  const b = Math.min((end ?? now).getTime(), to.getTime(), Math.max(now.getTime(), start.getTime()));
  return b > a ? (b - a) / 1000 : 0;
}

/**
 * A leave event carries LiveKit's time in whole seconds. Received within that second, the receive
 * time is the same instant to the millisecond; received later (a retry, a backlog, a busy host), the
 * event happened somewhere in its second, and its middle is off by half a second at most.
 */
export function eventTime(createdAt: Date, receivedAt: Date): Date {
  const lag = receivedAt.getTime() - createdAt.getTime();
  if (lag < 0) return createdAt;
  return lag < 1000 ? receivedAt : new Date(createdAt.getTime() + 500);
}

export function emptyTotals(): UsageTotals {
  return {
    participantMinutes: 0,
    publisherMinutes: 0,
    subscriberMinutes: 0,
    streamMinutes: 0,
    recordingMinutes: { room_composite: 0, track_composite: 0, track: 0, passthrough: 0 },
    ingressMinutes: { transcoded: 0, forwarded: 0 },
    hlsMinutes: 0,
    storageGbHours: 0,
    cameraMinutes: 0,
    cameraViewerMinutes: 0,
    ladderMinutes: { gpu: 0, cpu: 0 },
    hlsBytesServed: 0,
  };
}

/** Adds one quantity (seconds × weight) into totals in billing units; unknown meters are skipped. */
export function addQuantity(totals: UsageTotals, q: Quantity): UsageTotals {
  const minutes = q.quantity / 60;
  switch (q.meter as Meter) {
    case 'participant': {
      const publisherMinutes = totals.publisherMinutes + (q.dimension === 'publisher' ? minutes : 0);
      const subscriberMinutes = totals.subscriberMinutes + (q.dimension === 'publisher' ? 0 : minutes);
      return { ...totals, publisherMinutes, subscriberMinutes, participantMinutes: publisherMinutes + subscriberMinutes };
    }
    case 'stream':
      return { ...totals, streamMinutes: totals.streamMinutes + minutes };
    case 'recording': {
      const mode = q.dimension as keyof UsageTotals['recordingMinutes'];
      if (!(mode in totals.recordingMinutes)) return totals;
      return { ...totals, recordingMinutes: { ...totals.recordingMinutes, [mode]: totals.recordingMinutes[mode] + minutes } };
    }
    case 'ingress': {
      const kind = q.dimension === 'transcoded' ? 'transcoded' : 'forwarded';
      return { ...totals, ingressMinutes: { ...totals.ingressMinutes, [kind]: totals.ingressMinutes[kind] + minutes } };
    }
    case 'hls':
      return { ...totals, hlsMinutes: totals.hlsMinutes + minutes };
    case 'storage':
      return { ...totals, storageGbHours: totals.storageGbHours + q.quantity / 3600 / GB };
    case 'camera':
      return { ...totals, cameraMinutes: totals.cameraMinutes + minutes };
    case 'camera_viewer':
      return { ...totals, cameraViewerMinutes: totals.cameraViewerMinutes + minutes };
    case 'ladder': {
      const hardware = q.dimension === 'gpu' ? 'gpu' : 'cpu';
      return { ...totals, ladderMinutes: { ...totals.ladderMinutes, [hardware]: totals.ladderMinutes[hardware] + minutes } };
    }
    case 'hls_bytes':
      // A count is an interval of one second weighted by the count (usage-intervals.ts).
      return { ...totals, hlsBytesServed: totals.hlsBytesServed + q.quantity };
    default:
      return totals;
  }
}

export function totalsOf(quantities: Iterable<Quantity>): UsageTotals {
  let totals = emptyTotals();
  for (const q of quantities) totals = addQuantity(totals, q);
  return totals;
}

/** The meter names Prometheus counters and CloudEvents use, with each dimension's value in billing units. */
export function flatMeters(totals: UsageTotals): Readonly<Record<string, number>> {
  return {
    participant_minutes: totals.participantMinutes,
    publisher_minutes: totals.publisherMinutes,
    subscriber_minutes: totals.subscriberMinutes,
    stream_minutes: totals.streamMinutes,
    recording_minutes_room_composite: totals.recordingMinutes.room_composite,
    recording_minutes_track_composite: totals.recordingMinutes.track_composite,
    recording_minutes_track: totals.recordingMinutes.track,
    recording_minutes_passthrough: totals.recordingMinutes.passthrough,
    ingress_minutes_transcoded: totals.ingressMinutes.transcoded,
    ingress_minutes_forwarded: totals.ingressMinutes.forwarded,
    hls_minutes: totals.hlsMinutes,
    storage_gb_hours: totals.storageGbHours,
    camera_minutes: totals.cameraMinutes,
    camera_viewer_minutes: totals.cameraViewerMinutes,
    ladder_minutes_gpu: totals.ladderMinutes.gpu,
    ladder_minutes_cpu: totals.ladderMinutes.cpu,
    hls_bytes_served: totals.hlsBytesServed,
  };
}
