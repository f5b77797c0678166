import { Injectable, Logger } from '@nestjs/common';
import { DeliveryQueue } from '@tally/webhooks';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

/** A delivery this long overdue should have a job; younger ones may be between commit and flush. */
const GRACE_MS = 5_000;
const PAGE = 500;
/** Bounds one sweep; the next one continues with what is still overdue. */
const MAX_PER_SWEEP = 10_000;
/** A delivery overdue this long while its job looks live gets its job's state checked (see ensureQueued). */
const STALE_MS = 15 * 60_000;

/**
 * Crash recovery for the outbox: every pending delivery that is due gets a live job. Covers a
 * process that died between commit and flush, a job that failed out of BullMQ (stalled too often,
 * database down), and a Redis that lost its data. Job id = delivery id, so sweeping twice, or
 * alongside another worker, queues nothing twice.
 */
@Injectable()
export class OutboxSweeper {
  private readonly logger = new Logger(OutboxSweeper.name);

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly queue: DeliveryQueue,
  ) {}

  /** Returns how many deliveries were (re)queued. */
  async sweep(now: Date): Promise<number> {
    const dueBy = new Date(now.getTime() - GRACE_MS);
    const staleBy = now.getTime() - STALE_MS;
    let requeued = 0;
    let seen = 0;
    let cursor: { id: string; nextAttemptAt: Date } | undefined;
    while (seen < MAX_PER_SWEEP) {
      const page = await this.deliveries.overdue(dueBy, PAGE, cursor);
      if (page.length === 0) break;
      seen += page.length;
      const deliveries = page.map((d) => ({ appId: d.appId, deliveryId: d.id, stale: d.nextAttemptAt.getTime() < staleBy }));
      requeued += (await this.queue.ensureQueued(deliveries)).length;
      cursor = page[page.length - 1];
      if (page.length < PAGE) break;
    }
    if (requeued > 0) this.logger.log(`queued ${requeued} webhook deliveries that had no job`);
    return requeued;
  }
}
