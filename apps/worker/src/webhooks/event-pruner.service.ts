import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';

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
    private readonly prisma: PrismaService,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Returns how many webhook events and LiveKit events were deleted. */
  async prune(now: Date): Promise<{ webhookEvents: number; livekitEvents: number }> {
    const cutoff = new Date(now.getTime() - this.config.eventRetentionMs);
    const webhookEvents = await this.repeat(
      () => this.prisma.$executeRaw`
        DELETE FROM "WebhookEvent" WHERE id IN (
          SELECT e.id FROM "WebhookEvent" e
          WHERE e."createdAt" < ${cutoff}
            AND NOT EXISTS (SELECT 1 FROM "WebhookDelivery" d WHERE d."eventId" = e.id AND d.status = 'pending')
          LIMIT ${BATCH})`,
    );
    const livekitEvents = await this.repeat(
      () => this.prisma.$executeRaw`
        DELETE FROM "LivekitEvent" WHERE id IN (SELECT id FROM "LivekitEvent" WHERE "receivedAt" < ${cutoff} LIMIT ${BATCH})`,
    );
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
