import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { UsageCursors, usageCloudEvents, UsageReader } from '@tally/metering';
import { MeteringSyncRepository } from './metering-sync.repository.js';
import { UsageExportSender } from './usage-export.sender.js';

const HOUR_MS = 3_600_000;
/** An hour is sent once it has been over this long, so ends the reconciler closes late are in it. */
const SETTLE_MS = 2 * 60_000;
/** Hours sent per sweep while catching up. */
const MAX_HOURS_PER_SWEEP = 24;

/**
 * Sends each closed hour's usage, once settled, to TALLY_USAGE_EXPORT_URL as a CloudEvents 1.0 batch
 * signed with Standard Webhooks (webhook-id `usage-<hour>`). The `export` cursor moves past an hour
 * only after a 2xx, so a failed or interrupted send is repeated, with the same ids.
 */
@Injectable()
export class UsageExporter {
  constructor(
    private readonly cursors: UsageCursors,
    private readonly reader: UsageReader,
    private readonly repository: MeteringSyncRepository,
    private readonly sender: UsageExportSender,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Returns how many hours were sent. */
  async run(now: Date): Promise<number> {
    const target = this.config.metering.export;
    if (!target) return 0;
    const first = (await this.cursors.get('export')) ?? (await this.repository.firstUsageHour());
    if (!first) return 0;
    let hour: Date = first;
    const source = `${this.config.http.publicUrl}/v1/metering`;
    let sent = 0;
    while (hour.getTime() + HOUR_MS + SETTLE_MS <= now.getTime() && sent < MAX_HOURS_PER_SWEEP) {
      const next: Date = new Date(hour.getTime() + HOUR_MS);
      const events = usageCloudEvents(hour, await this.reader.hourly('all', hour, next, now), source);
      if (events.length > 0) await this.sender.send(target, `usage-${hour.toISOString()}`, JSON.stringify(events), now.getTime() / 1000);
      await this.cursors.set('export', next);
      hour = next;
      sent += 1;
    }
    return sent;
  }
}
