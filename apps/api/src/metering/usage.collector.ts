import { Injectable } from '@nestjs/common';
import { UsageReader } from '@tally/metering';
import { Counter } from 'prom-client';
import { Clock } from '../common/clock.js';
import { METRICS } from '../metrics/metric-names.js';
import { MetricsRegistry } from '../metrics/metrics.registry.js';

type Spec = Readonly<{ name: string; help: string; meter: string; label?: string; unit: number }>;

/** Seconds × weight → the counter's unit: minutes, GB-hours for storage (weight in bytes), bytes for HLS served (one second × bytes). */
const SPECS: readonly Spec[] = [
  {
    name: METRICS.usageParticipantMinutes,
    help: 'Participant minutes per app, by role (publisher, subscriber)',
    meter: 'participant',
    label: 'role',
    unit: 60,
  },
  { name: METRICS.usageStreamMinutes, help: 'Stream minutes (live to ended) per app', meter: 'stream', unit: 60 },
  { name: METRICS.usageRecordingMinutes, help: 'Recording minutes per app, by egress mode', meter: 'recording', label: 'mode', unit: 60 },
  {
    name: METRICS.usageIngressMinutes,
    help: 'Ingress publishing minutes per app, transcoded or forwarded',
    meter: 'ingress',
    label: 'kind',
    unit: 60,
  },
  { name: METRICS.usageHlsMinutes, help: 'Live HLS minutes per app', meter: 'hls', unit: 60 },
  { name: METRICS.usageStorageGbHours, help: "GB-hours of an app's complete recordings kept", meter: 'storage', unit: 3600 * 1e9 },
  { name: METRICS.usageCameraMinutes, help: 'ws-mjpeg camera minutes (ingest connected) per app', meter: 'camera', unit: 60 },
  {
    name: METRICS.usageCameraViewerMinutes,
    help: 'Live camera viewer minutes (MJPEG and WebSocket) per app',
    meter: 'camera_viewer',
    unit: 60,
  },
  {
    name: METRICS.usageLadderMinutes,
    help: 'VOD ladder minutes per app, by hardware (gpu, cpu)',
    meter: 'ladder',
    label: 'hardware',
    unit: 60,
  },
  { name: METRICS.usageHlsBytesServed, help: 'Bytes of public HLS playlists and segments served per app', meter: 'hls_bytes', unit: 1 },
];

/** tally_usage_*_total{app}: what GET /v1/apps/{appId}/metering bills, since metering began (docs/metering.md). */
@Injectable()
export class UsageCollector {
  constructor(reader: UsageReader, metrics: MetricsRegistry, clock: Clock) {
    const totals = metrics.perScrape(() => reader.totalsSinceStart(clock.now()));
    for (const spec of SPECS) {
      const labelNames = spec.label ? ['app', spec.label] : ['app'];
      new Counter({
        name: spec.name,
        help: spec.help,
        labelNames,
        registers: [metrics.registry],
        async collect() {
          const rows = await totals();
          this.reset();
          for (const r of rows) {
            if (r.meter !== spec.meter || r.quantity <= 0) continue;
            this.inc(spec.label ? { app: r.appId, [spec.label]: r.dimension } : { app: r.appId }, r.quantity / spec.unit);
          }
        },
      });
    }
  }
}
