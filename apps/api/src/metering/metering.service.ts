import { Injectable } from '@nestjs/common';
import type {
  AllAppsMeteringQuery,
  AllAppsMeteringView,
  AppMeteringView,
  MeteringGranularity,
  MeteringQuery,
  UsageBucket,
} from '@tally/contracts';
import { addQuantity, ceilTo, emptyTotals, floorTo, granularityMs, totalsOf, UsageReader } from '@tally/metering';
import { Clock } from '../common/clock.js';

/** Reads usage for billing: totals and buckets of one app, or totals of every app. */
@Injectable()
export class MeteringService {
  constructor(
    private readonly reader: UsageReader,
    private readonly clock: Clock,
  ) {}

  async ofApp(appId: string, query: MeteringQuery): Promise<AppMeteringView> {
    const { from, to, step } = range(query.from, query.to, query.granularity);
    const hours = await this.reader.hourly({ appId }, from, to, this.clock.now());
    const buckets: UsageBucket[] = [];
    for (let t = from.getTime(); t < to.getTime(); t += step) {
      buckets.push({ start: new Date(t).toISOString(), end: new Date(t + step).toISOString(), usage: emptyTotals() });
    }
    for (const hour of hours) {
      const bucket = buckets[Math.floor((hour.hour.getTime() - from.getTime()) / step)];
      if (bucket) bucket.usage = addQuantity(bucket.usage, hour);
    }
    return {
      appId,
      from: from.toISOString(),
      to: to.toISOString(),
      granularity: query.granularity,
      ...totalsOf(hours),
      buckets,
    };
  }

  async ofAllApps(query: AllAppsMeteringQuery): Promise<AllAppsMeteringView> {
    const { from, to } = range(query.from, query.to, 'hour');
    const hours = await this.reader.hourly('all', from, to, this.clock.now());
    const byApp = new Map<string, typeof hours>();
    for (const hour of hours) byApp.set(hour.appId, [...(byApp.get(hour.appId) ?? []), hour]);
    const apps = [...byApp.entries()]
      .map(([appId, quantities]) => ({ appId, ...totalsOf(quantities) }))
      .sort((a, b) => b.participantMinutes - a.participantMinutes || a.appId.localeCompare(b.appId));
    return { from: from.toISOString(), to: to.toISOString(), ...totalsOf(hours), apps };
  }
}

function range(from: string, to: string, granularity: MeteringGranularity): { from: Date; to: Date; step: number } {
  const step = granularityMs(granularity);
  return { from: floorTo(new Date(from), step), to: ceilTo(new Date(to), step), step };
}
