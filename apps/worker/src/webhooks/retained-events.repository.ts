import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';

/** The event rows retention deletes (every app's), a bounded batch per call. */
@Injectable()
export class RetainedEventsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** App webhook events created before `cutoff` with no pending delivery (their deliveries go with them). */
  deleteSettledWebhookEvents(cutoff: Date, batch: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM "WebhookEvent" WHERE id IN (
        SELECT e.id FROM "WebhookEvent" e
        WHERE e."createdAt" < ${cutoff}
          AND NOT EXISTS (SELECT 1 FROM "WebhookDelivery" d WHERE d."eventId" = e.id AND d.status = 'pending')
        LIMIT ${batch})`;
  }

  /** Applied LiveKit events received before `cutoff`. */
  deleteLivekitEvents(cutoff: Date, batch: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM "LivekitEvent" WHERE id IN (SELECT id FROM "LivekitEvent" WHERE "receivedAt" < ${cutoff} LIMIT ${batch})`;
  }
}
