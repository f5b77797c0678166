import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { RetainedEventsRepository } from './retained-events.repository.js';

/** Rows deleted per statement, so one prune never holds long locks or a huge transaction. */
const BATCH = 5_000;
/** Bounds one prune; the next sweep continues. */
const MAX_BATCHES = 20;

/**
 * Retention (TALLY_EVENT_RETENTION_DAYS): app webhook events older than that, with their deliveries,
 * once none of those is still pending; and applied LiveKit events (kept only to recognise a
 * redelivered LiveKit webhook, which LiveKit stops retrying within minutes).
 */
@Injectable()
export class EventPruner {
  private readonly logger = new Logger(EventPruner.name);

  constructor(
    private readonly events: RetainedEventsRepository,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Returns how many webhook events and LiveKit events were deleted. */
  async prune(now: Date): Promise<{ webhookEvents: number; livekitEvents: number }> {
    const cutoff = new Date(now.getTime() - this.config.eventRetentionMs);
    const webhookEvents = await this.repeat(() => this.events.deleteSettledWebhookEvents(cutoff, BATCH));
    const livekitEvents = await this.repeat(() => this.events.deleteLivekitEvents(cutoff, BATCH));
    if (webhookEvents + livekitEvents > 0) {
      this.logger.log(`pruned ${webhookEvents} webhook events and ${livekitEvents} LiveKit events older than ${cutoff.toISOString()}`);
    }
    return { webhookEvents, livekitEvents };
  }

  private async repeat(deleteBatch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (let i = 0; i < MAX_BATCHES; i += 1) {
      const deleted = await deleteBatch();
      total += deleted;
      if (deleted < BATCH) break;
    }
    return total;
  }
}
