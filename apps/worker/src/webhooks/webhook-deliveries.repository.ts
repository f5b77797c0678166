import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tally/db';
import { Batcher } from './batcher.js';

/** What one attempt needs: the delivery, its event's stored body and the app's sealed secrets and health. */
export type DeliveryToSend = Readonly<{
  id: string;
  appId: string;
  url: string;
  attempts: number;
  eventId: string;
  eventType: string;
  body: string;
  sealedSecret: string | null;
  /** The previous secret while a rotation's grace period lasts, else null. */
  sealedPreviousSecret: string | null;
  previousSecretUntil: Date | null;
  /** The app endpoint's health when claimed. */
  failingSince: Date | null;
  disabledAt: Date | null;
}>;

/** How many more attempts this worker may start for each app: `cap` less what it runs for that app now. */
export type ClaimSlots = Readonly<{ cap: number; running: ReadonlyMap<string, number> }>;

/** A claimed delivery as the claim's JSON carries it (timestamps without a zone, in UTC). */
type ClaimedRow = {
  id: string;
  appId: string;
  url: string;
  attempts: number;
  eventId: string;
  eventType: string;
  payload: unknown;
  webhookSecret: string | null;
  webhookSecretPrevious: string | null;
  webhookSecretPreviousUntil: string | null;
  webhookFailingSince: string | null;
  webhookDisabledAt: string | null;
};

export type AttemptRecord = Readonly<{ at: Date; statusCode: number | null; error: string | null }>;

type DeliveredMark = Readonly<{ deliveryId: string; at: Date; statusCode: number | null }>;

/** The claim's rows travel as one JSON text value: one column to decode instead of a dozen typed ones per row. */
type ClaimResult = { claimed: string };

/** Prisma's DateTime columns are UTC timestamps without a zone: the database's clock in that form. */
const DB_NOW = Prisma.sql`(now() AT TIME ZONE 'UTC')`;

/**
 * The delivery rows are the queue (docs/adr/0019-webhook-deliveries-claimed-from-postgres.md): a
 * worker claims due pending rows under a short lease, renews its leases while it attempts them,
 * and records each outcome, which ends the lease.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  /** Concurrent successes share one UPDATE (group commit). */
  private readonly deliveredMarks = new Batcher<DeliveredMark, void>(async (marks) => {
    await this.markDelivered(marks);
    return marks.map(() => undefined);
  });

  constructor(private readonly prisma: PrismaService) {}

  /**
   * One statement: for every app with pending deliveries (a skip scan of the status/app index),
   * up to that app's free slots of its due, unleased deliveries, oldest first, skipping rows
   * another worker is claiming (SKIP LOCKED); leases them to `owner` for `leaseMs` and returns each
   * with its event's body and the app's secrets and health. An app at its cap claims nothing, so a
   * receiver that never answers holds only its own app's slots. The same statement marks the
   * successes waiting for their batch (a data-modifying CTE always runs to completion), so a busy
   * worker makes one round trip per batch of attempts, not two.
   */
  async claim(owner: string, slots: ClaimSlots, leaseMs: number): Promise<DeliveryToSend[]> {
    // Successes waiting for their batch ride along: one statement marks them and claims the next.
    const carried = this.deliveredMarks.takeWaiting();
    try {
      const claimed = await this.markAndClaim(
        owner,
        slots,
        leaseMs,
        carried.map((w) => w.item),
      );
      carried.forEach((w) => w.resolve(undefined));
      return claimed;
    } catch (error) {
      carried.forEach((w) => w.reject(error));
      throw error;
    }
  }

  private async markAndClaim(
    owner: string,
    slots: ClaimSlots,
    leaseMs: number,
    marks: readonly DeliveredMark[],
  ): Promise<DeliveryToSend[]> {
    const markedIds = marks.map((m) => m.deliveryId);
    const codes = marks.map((m) => m.statusCode);
    const ats = marks.map((m) => m.at.toISOString());
    const busy = [...slots.running.entries()].filter(([, n]) => n > 0);
    const busyApps = busy.map(([appId]) => appId);
    const busyRunning = busy.map(([, n]) => n);
    const [result] = await this.prisma.$queryRaw<ClaimResult[]>`
      WITH RECURSIVE apps AS (
        (SELECT d."appId" FROM "WebhookDelivery" d WHERE d.status = 'pending' ORDER BY d."appId" LIMIT 1)
        UNION ALL
        SELECT (SELECT d."appId" FROM "WebhookDelivery" d
                WHERE d.status = 'pending' AND d."appId" > apps."appId" ORDER BY d."appId" LIMIT 1)
        FROM apps WHERE apps."appId" IS NOT NULL
      ),
      marked AS (
        UPDATE "WebhookDelivery" d
        SET status = 'delivered', attempts = d.attempts + 1, "lastStatusCode" = v.code, "lastError" = NULL,
            "lastAttemptAt" = v.at AT TIME ZONE 'UTC', "deliveredAt" = v.at AT TIME ZONE 'UTC', "nextAttemptAt" = NULL,
            "leaseOwner" = NULL, "leasedUntil" = NULL
        FROM unnest(${markedIds}::text[], ${codes}::int[], ${ats}::timestamptz[]) AS v(id, code, at)
        WHERE d.id = v.id AND d.status <> 'delivered'
        RETURNING d.id
      ),
      busy AS (SELECT * FROM unnest(${busyApps}::text[], ${busyRunning}::int[]) AS b("appId", running)),
      picked AS (
        SELECT p.id FROM apps a
        LEFT JOIN busy b ON b."appId" = a."appId"
        CROSS JOIN LATERAL (
          SELECT d.id FROM "WebhookDelivery" d
          WHERE d.status = 'pending' AND d."appId" = a."appId" AND d."nextAttemptAt" <= ${DB_NOW}
            AND (d."leasedUntil" IS NULL OR d."leasedUntil" < ${DB_NOW})
            AND d.id <> ALL(${markedIds}::text[])
          ORDER BY d."nextAttemptAt"
          LIMIT GREATEST(${slots.cap}::int - COALESCE(b.running, 0), 0)
          FOR UPDATE OF d SKIP LOCKED
        ) p
        WHERE a."appId" IS NOT NULL
      ),
      claimed AS (
        UPDATE "WebhookDelivery" d
        SET "leaseOwner" = ${owner}, "leasedUntil" = ${DB_NOW} + ${leaseMs}::int * interval '1 millisecond'
        FROM picked WHERE d.id = picked.id
        RETURNING d.id, d."appId", d.url, d.attempts, d."eventId"
      )
      SELECT coalesce(json_agg(json_build_object(
               'id', c.id, 'appId', c."appId", 'url', c.url, 'attempts', c.attempts, 'eventId', c."eventId",
               'eventType', e.type, 'payload', e.payload,
               'webhookSecret', a."webhookSecret", 'webhookSecretPrevious', a."webhookSecretPrevious",
               'webhookSecretPreviousUntil', a."webhookSecretPreviousUntil", 'webhookFailingSince', a."webhookFailingSince",
               'webhookDisabledAt', a."webhookDisabledAt")), '[]')::text AS claimed
      FROM claimed c
      JOIN "WebhookEvent" e ON e.id = c."eventId"
      JOIN "App" a ON a.id = c."appId"`;
    return (JSON.parse(result?.claimed ?? '[]') as ClaimedRow[]).map(toDelivery);
  }

  /** Extends `owner`'s leases on the deliveries it still attempts: one statement for all of them. */
  async renew(owner: string, deliveryIds: readonly string[], leaseMs: number): Promise<number> {
    if (deliveryIds.length === 0) return 0;
    return this.prisma.$executeRaw`
      UPDATE "WebhookDelivery" SET "leasedUntil" = ${DB_NOW} + ${leaseMs}::int * interval '1 millisecond'
      WHERE id = ANY(${[...deliveryIds]}::text[]) AND "leaseOwner" = ${owner} AND status = 'pending'`;
  }

  /** Gives `owner`'s leases back at once (a worker stopping with attempts it will not make). */
  async release(owner: string, deliveryIds: readonly string[]): Promise<number> {
    if (deliveryIds.length === 0) return 0;
    return this.prisma.$executeRaw`
      UPDATE "WebhookDelivery" SET "leaseOwner" = NULL, "leasedUntil" = NULL
      WHERE id = ANY(${[...deliveryIds]}::text[]) AND "leaseOwner" = ${owner}`;
  }

  /**
   * A 2xx: delivered, whatever a concurrent attempt recorded (a dead delivery that got through is
   * delivered). Resolves once the row is written.
   */
  async recordDelivered(deliveryId: string, attempt: AttemptRecord): Promise<void> {
    await this.deliveredMarks.add({ deliveryId, at: attempt.at, statusCode: attempt.statusCode });
  }

  /** One UPDATE for the batch, its values as three arrays; times are written as UTC like Prisma's own DateTime columns. */
  private async markDelivered(marks: readonly DeliveredMark[]): Promise<void> {
    const ids = marks.map((m) => m.deliveryId);
    const codes = marks.map((m) => m.statusCode);
    const ats = marks.map((m) => m.at.toISOString());
    await this.prisma.$executeRaw`
      UPDATE "WebhookDelivery" d
      SET status = 'delivered', attempts = d.attempts + 1, "lastStatusCode" = v.code, "lastError" = NULL,
          "lastAttemptAt" = v.at AT TIME ZONE 'UTC', "deliveredAt" = v.at AT TIME ZONE 'UTC', "nextAttemptAt" = NULL,
          "leaseOwner" = NULL, "leasedUntil" = NULL
      FROM unnest(${ids}::text[], ${codes}::int[], ${ats}::timestamptz[]) AS v(id, code, at)
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
        leaseOwner: null,
        leasedUntil: null,
      },
    });
  }

  /** A pending delivery that will not be attempted (its endpoint is disabled): dead, with the reason. */
  async recordAbandoned(deliveryId: string, at: Date, error: string): Promise<void> {
    await this.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'pending' },
      data: { status: 'dead', lastError: error, lastAttemptAt: at, nextAttemptAt: null, leaseOwner: null, leasedUntil: null },
    });
  }
}

function toDelivery(row: ClaimedRow): DeliveryToSend {
  return {
    id: row.id,
    appId: row.appId,
    url: row.url,
    attempts: row.attempts,
    eventId: row.eventId,
    eventType: row.eventType,
    // The payload was written as the exact event body; every attempt sends the same bytes (JSON.stringify of the stored jsonb).
    body: JSON.stringify(row.payload),
    sealedSecret: row.webhookSecret,
    sealedPreviousSecret: row.webhookSecretPrevious,
    previousSecretUntil: utc(row.webhookSecretPreviousUntil),
    failingSince: utc(row.webhookFailingSince),
    disabledAt: utc(row.webhookDisabledAt),
  };
}

/** A zoneless timestamp from the claim's JSON (Prisma stores UTC) as a Date. */
function utc(timestamp: string | null): Date | null {
  return timestamp === null ? null : new Date(`${timestamp}Z`);
}
