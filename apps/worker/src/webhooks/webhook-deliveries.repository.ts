import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tally/db';
import { Batcher } from './batcher.js';

/** What one attempt needs: the delivery, its event's stored body and the app's sealed secret. */
export type DeliveryToSend = Readonly<{
  id: string;
  appId: string;
  url: string;
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  eventId: string;
  eventType: string;
  body: string;
  sealedSecret: string | null;
  /** The previous secret while a rotation's grace period lasts, else null. */
  sealedPreviousSecret: string | null;
  previousSecretUntil: Date | null;
  /** The app endpoint's health when loaded. */
  failingSince: Date | null;
  disabledAt: Date | null;
}>;

type LoadedRow = {
  id: string;
  appId: string;
  url: string;
  status: DeliveryToSend['status'];
  attempts: number;
  eventId: string;
  eventType: string;
  payload: unknown;
  webhookSecret: string | null;
  webhookSecretPrevious: string | null;
  webhookSecretPreviousUntil: Date | null;
  webhookFailingSince: Date | null;
  webhookDisabledAt: Date | null;
};

export type AttemptRecord = Readonly<{ at: Date; statusCode: number | null; error: string | null }>;

type DeliveredMark = Readonly<{ deliveryId: string; at: Date; statusCode: number | null }>;

@Injectable()
export class WebhookDeliveriesRepository {
  /** Concurrent attempts share their reads and their success writes (one statement per batch). */
  private readonly loads = new Batcher<string, DeliveryToSend | undefined>((ids) => this.loadMany(ids));
  private readonly deliveredMarks = new Batcher<DeliveredMark, void>(async (marks) => {
    await this.markDelivered(marks);
    return marks.map(() => undefined);
  });

  constructor(private readonly prisma: PrismaService) {}

  /** The delivery, its event's body and type, the app's secrets and health (read with whatever other attempts start now). */
  async load(deliveryId: string): Promise<DeliveryToSend | undefined> {
    return this.loads.add(deliveryId);
  }

  /**
   * A 2xx: delivered, whatever a concurrent attempt recorded (a dead delivery that got through is
   * delivered). Resolves once the row is written, so the job completes only after that.
   */
  async recordDelivered(deliveryId: string, attempt: AttemptRecord): Promise<void> {
    await this.deliveredMarks.add({ deliveryId, at: attempt.at, statusCode: attempt.statusCode });
  }

  private async loadMany(ids: readonly string[]): Promise<(DeliveryToSend | undefined)[]> {
    const rows = await this.prisma.$queryRaw<LoadedRow[]>`
      SELECT d.id, d."appId", d.url, d.status::text AS status, d.attempts, d."eventId", e.type AS "eventType", e.payload,
             a."webhookSecret", a."webhookSecretPrevious", a."webhookSecretPreviousUntil", a."webhookFailingSince", a."webhookDisabledAt"
      FROM "WebhookDelivery" d
      JOIN "WebhookEvent" e ON e.id = d."eventId"
      JOIN "App" a ON a.id = e."appId"
      WHERE d.id IN (${Prisma.join(ids)})`;
    const byId = new Map(rows.map((row) => [row.id, toDelivery(row)]));
    return ids.map((id) => byId.get(id));
  }

  /** One UPDATE for the batch; times are written as UTC like Prisma's own DateTime columns. */
  private async markDelivered(marks: readonly DeliveredMark[]): Promise<void> {
    const values = marks.map(
      (m) => Prisma.sql`(${m.deliveryId}, ${m.statusCode}::int, ${m.at.toISOString()}::timestamptz AT TIME ZONE 'UTC')`,
    );
    await this.prisma.$executeRaw`
      UPDATE "WebhookDelivery" d
      SET status = 'delivered', attempts = d.attempts + 1, "lastStatusCode" = v.code, "lastError" = NULL,
          "lastAttemptAt" = v.at, "deliveredAt" = v.at, "nextAttemptAt" = NULL
      FROM (VALUES ${Prisma.join(values)}) AS v(id, code, at)
      WHERE d.id = v.id AND d.status <> 'delivered'`;
  }

  /** A failed attempt of a pending delivery: retried at `nextAttemptAt`, or dead when that is null. */
  async recordFailed(deliveryId: string, attempt: AttemptRecord, nextAttemptAt: Date | null): Promise<void> {
    await this.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'pending' },
      data: {
        status: nextAttemptAt === null ? 'dead' : 'pending',
        attempts: { increment: 1 },
        lastStatusCode: attempt.statusCode,
        lastError: attempt.error,
        lastAttemptAt: attempt.at,
        nextAttemptAt,
      },
    });
  }

  /** A pending delivery that will not be attempted (its endpoint is disabled): dead, with the reason. */
  async recordAbandoned(deliveryId: string, at: Date, error: string): Promise<void> {
    await this.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'pending' },
      data: { status: 'dead', lastError: error, lastAttemptAt: at, nextAttemptAt: null },
    });
  }

  /** Pending deliveries due at or before `dueBy`, oldest first, after the `after` id of the same due time. */
  async overdue(
    dueBy: Date,
    limit: number,
    cursor?: { nextAttemptAt: Date; id: string },
  ): Promise<{ id: string; appId: string; nextAttemptAt: Date }[]> {
    const rows = await this.prisma.webhookDelivery.findMany({
      where: {
        status: 'pending',
        nextAttemptAt: { lte: dueBy },
        ...(cursor
          ? { OR: [{ nextAttemptAt: { gt: cursor.nextAttemptAt } }, { nextAttemptAt: cursor.nextAttemptAt, id: { gt: cursor.id } }] }
          : {}),
      },
      orderBy: [{ nextAttemptAt: 'asc' }, { id: 'asc' }],
      take: limit,
      select: { id: true, appId: true, nextAttemptAt: true },
    });
    return rows.flatMap((r) => (r.nextAttemptAt ? [{ id: r.id, appId: r.appId, nextAttemptAt: r.nextAttemptAt }] : []));
  }
}

function toDelivery(row: LoadedRow): DeliveryToSend {
  return {
    id: row.id,
    appId: row.appId,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    eventId: row.eventId,
    eventType: row.eventType,
    // The payload was written as the exact event body; every attempt sends the same bytes (JSON.stringify
    // of the stored jsonb, whether the driver hands it parsed or as text).
    body: JSON.stringify(typeof row.payload === 'string' ? (JSON.parse(row.payload) as unknown) : row.payload),
    sealedSecret: row.webhookSecret,
    sealedPreviousSecret: row.webhookSecretPrevious,
    previousSecretUntil: row.webhookSecretPreviousUntil,
    failingSince: row.webhookFailingSince,
    disabledAt: row.webhookDisabledAt,
  };
}
