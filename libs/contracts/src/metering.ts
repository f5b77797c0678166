import { z } from 'zod';
import { AppId } from './ids.js';

/** Longest range one metering read may cover (a little over 13 months). */
export const METERING_MAX_RANGE_DAYS = 400;

const Instant = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z' });

export const MeteringGranularity = z.enum(['hour', 'day']);
export type MeteringGranularity = z.infer<typeof MeteringGranularity>;

const rangeFields = {
  from: Instant.describe('Start of the range (inclusive), rounded down to the granularity'),
  to: Instant.describe('End of the range (exclusive), rounded up to the granularity'),
};

/** `to` after `from`, at most METERING_MAX_RANGE_DAYS apart; the 400 names `to`. */
function checkRange(q: { from: string; to: string }, ctx: z.RefinementCtx): void {
  const span = Date.parse(q.to) - Date.parse(q.from);
  if (!(span > 0)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
  else if (span > METERING_MAX_RANGE_DAYS * 86_400_000)
    ctx.addIssue({ code: 'custom', path: ['to'], message: `must be at most ${METERING_MAX_RANGE_DAYS} days after from` });
}

export const MeteringQuery = z
  .strictObject({ ...rangeFields, granularity: MeteringGranularity.default('day').describe('Bucket size: hour or day (UTC)') })
  .superRefine(checkRange);
export type MeteringQuery = z.infer<typeof MeteringQuery>;

export const AllAppsMeteringQuery = z.strictObject(rangeFields).superRefine(checkRange);
export type AllAppsMeteringQuery = z.infer<typeof AllAppsMeteringQuery>;

const Minutes = z.number().nonnegative();

/** Every meter, in the units an operator bills in. */
export const UsageTotals = z.object({
  /** Publishers and subscribers together. */
  participantMinutes: Minutes,
  publisherMinutes: Minutes,
  subscriberMinutes: Minutes,
  streamMinutes: Minutes,
  /** By egress mode. */
  recordingMinutes: z.object({
    room_composite: Minutes,
    track_composite: Minutes,
    track: Minutes,
    passthrough: Minutes,
  }),
  /** RTMP / WHIP ingest sessions, transcoded by ingress or forwarded as sent. */
  ingressMinutes: z.object({ transcoded: Minutes, forwarded: Minutes }),
  hlsMinutes: Minutes,
  /** Complete recordings' bytes held over time, in GB (10^9 bytes) × hours. */
  storageGbHours: Minutes,
  /** ws-mjpeg cameras connected to their ingest. */
  cameraMinutes: Minutes,
  /** Live MJPEG and WebSocket viewers of the app's cameras (still frames are not minutes). */
  cameraViewerMinutes: Minutes,
  /** VOD ladder runs on a node's agent, on NVENC GPUs or the CPU. */
  ladderMinutes: z.object({ gpu: Minutes, cpu: Minutes }),
  /** Body bytes of the public HLS playlists and segments Tally served (complete responses). */
  hlsBytesServed: z.number().nonnegative(),
});
export type UsageTotals = z.infer<typeof UsageTotals>;

export const UsageBucket = z.object({ start: z.string(), end: z.string(), usage: UsageTotals });
export type UsageBucket = z.infer<typeof UsageBucket>;

export const AppMeteringView = UsageTotals.extend({
  appId: AppId,
  from: z.string(),
  to: z.string(),
  granularity: MeteringGranularity,
  buckets: z.array(UsageBucket),
});
export type AppMeteringView = z.infer<typeof AppMeteringView>;

export const AllAppsMeteringView = UsageTotals.extend({
  from: z.string(),
  to: z.string(),
  /** Apps with any usage in the range, most participant minutes first. */
  apps: z.array(UsageTotals.extend({ appId: z.string() })),
});
export type AllAppsMeteringView = z.infer<typeof AllAppsMeteringView>;
