import type { UsageBucket, UsageTotals } from '@tally/contracts';

/** One line of a meter's chart: a named part of the meter read from a bucket's usage. */
export type UsageSeries = Readonly<{ name: string; value: (usage: UsageTotals) => number }>;

/** A meter as the Usage page shows it: one chart per meter, one line per series, one total. */
export type UsageMeter = Readonly<{
  id: string;
  title: string;
  unit: string;
  total: (usage: UsageTotals) => number;
  series: readonly [UsageSeries, ...UsageSeries[]];
}>;

const GB = 1e9;
const recordings = (u: UsageTotals): number => Object.values(u.recordingMinutes).reduce((a, b) => a + b, 0);

export const USAGE_METERS: readonly UsageMeter[] = [
  {
    id: 'participants',
    title: 'Participant minutes',
    unit: 'minutes',
    total: (u) => u.participantMinutes,
    series: [
      { name: 'Publishers', value: (u) => u.publisherMinutes },
      { name: 'Subscribers', value: (u) => u.subscriberMinutes },
    ],
  },
  {
    id: 'streams',
    title: 'Stream minutes',
    unit: 'minutes',
    total: (u) => u.streamMinutes,
    series: [{ name: 'Streams', value: (u) => u.streamMinutes }],
  },
  {
    id: 'recordings',
    title: 'Recording minutes',
    unit: 'minutes',
    total: recordings,
    series: [
      { name: 'Room composite', value: (u) => u.recordingMinutes.room_composite },
      { name: 'Track composite', value: (u) => u.recordingMinutes.track_composite },
      { name: 'Track', value: (u) => u.recordingMinutes.track },
      { name: 'Passthrough', value: (u) => u.recordingMinutes.passthrough },
    ],
  },
  {
    id: 'ingresses',
    title: 'Ingress minutes',
    unit: 'minutes',
    total: (u) => u.ingressMinutes.transcoded + u.ingressMinutes.forwarded,
    series: [
      { name: 'Transcoded', value: (u) => u.ingressMinutes.transcoded },
      { name: 'Forwarded', value: (u) => u.ingressMinutes.forwarded },
    ],
  },
  {
    id: 'hls',
    title: 'Live HLS minutes',
    unit: 'minutes',
    total: (u) => u.hlsMinutes,
    series: [{ name: 'Live HLS', value: (u) => u.hlsMinutes }],
  },
  {
    id: 'storage',
    title: 'Storage GB-hours',
    unit: 'GB-hours',
    total: (u) => u.storageGbHours,
    series: [{ name: 'Recordings stored', value: (u) => u.storageGbHours }],
  },
  {
    id: 'cameras',
    title: 'Camera minutes',
    unit: 'minutes',
    total: (u) => u.cameraMinutes,
    series: [{ name: 'Cameras connected', value: (u) => u.cameraMinutes }],
  },
  {
    id: 'camera-viewers',
    title: 'Camera viewer minutes',
    unit: 'minutes',
    total: (u) => u.cameraViewerMinutes,
    series: [{ name: 'Camera viewers', value: (u) => u.cameraViewerMinutes }],
  },
  {
    id: 'ladders',
    title: 'Ladder minutes',
    unit: 'minutes',
    total: (u) => u.ladderMinutes.gpu + u.ladderMinutes.cpu,
    series: [
      { name: 'GPU', value: (u) => u.ladderMinutes.gpu },
      { name: 'CPU', value: (u) => u.ladderMinutes.cpu },
    ],
  },
  {
    id: 'hls-bytes',
    title: 'HLS served',
    unit: 'GB',
    total: (u) => u.hlsBytesServed / GB,
    series: [{ name: 'HLS served', value: (u) => u.hlsBytesServed / GB }],
  },
];

export const USAGE_DAYS = 30;
/** Usage changes by the minute, not by the second: a slower refresh than the live pages. */
export const USAGE_REFRESH_MS = 30_000;
const DAY_MS = 86_400_000;

/** The last USAGE_DAYS UTC days, today included: `to` is the coming UTC midnight. */
export function lastDays(now: Date, days = USAGE_DAYS): Readonly<{ from: string; to: string }> {
  const to = Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS;
  return { from: new Date(to - days * DAY_MS).toISOString(), to: new Date(to).toISOString() };
}

/** One chart row per bucket: its UTC day (MM-DD) and each series' value. */
export function chartRows(meter: UsageMeter, buckets: readonly UsageBucket[]): Record<string, string | number>[] {
  return buckets.map((b) => {
    const row: Record<string, string | number> = { day: b.start.slice(5, 10) };
    for (const s of meter.series) row[s.name] = s.value(b.usage);
    return row;
  });
}

/** Minutes with one decimal, GB-hours and GB with three: small bills stay readable. */
export function formatUsage(value: number, unit: string): string {
  const digits = unit === 'GB-hours' || unit === 'GB' ? 3 : 1;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
