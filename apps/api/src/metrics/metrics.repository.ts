import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';

export type Counted<K extends string> = Readonly<Record<K, string>> & Readonly<{ count: number }>;
export type LiveCamera = Readonly<{ id: string; appId: string }>;
export type PendingDeliveries = Readonly<{ appId: string; active: number; waiting: number; delayed: number }>;
export type CompletedRecordings = Readonly<{ mode: string; count: number; durationS: number; sizeBytes: number }>;

const OPEN_RECORDING = ['starting', 'active', 'ending'] as const;
const DAY_MS = 24 * 3_600_000;

/** The Postgres side of the metrics: grouped counts only, never per-row labels. */
@Injectable()
export class MetricsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async openStreams(): Promise<Counted<'appId' | 'status'>[]> {
    const rows = await this.prisma.stream.groupBy({
      by: ['appId', 'status'],
      where: { status: { in: ['created', 'live'] } },
      _count: { _all: true },
    });
    return rows.map((r) => ({ appId: r.appId, status: r.status, count: r._count._all }));
  }

  async openRecordings(): Promise<Counted<'appId' | 'mode' | 'status'>[]> {
    const rows = await this.prisma.recording.groupBy({
      by: ['appId', 'mode', 'status'],
      where: { status: { in: [...OPEN_RECORDING] } },
      _count: { _all: true },
    });
    return rows.map((r) => ({ appId: r.appId, mode: r.mode, status: r.status, count: r._count._all }));
  }

  /** Recordings that reached complete or failed, ever (rows of deleted apps go with them). */
  async finishedRecordings(): Promise<Counted<'mode' | 'status'>[]> {
    const rows = await this.prisma.recording.groupBy({
      by: ['mode', 'status'],
      where: { status: { in: ['complete', 'failed'] } },
      _count: { _all: true },
    });
    return rows.map((r) => ({ mode: r.mode, status: r.status, count: r._count._all }));
  }

  async completedSince(now: Date): Promise<CompletedRecordings[]> {
    const rows = await this.prisma.recording.groupBy({
      by: ['mode'],
      where: { status: 'complete', endedAt: { gte: new Date(now.getTime() - DAY_MS) } },
      _count: { _all: true },
      _sum: { durationS: true, sizeBytes: true },
    });
    return rows.map((r) => ({
      mode: r.mode,
      count: r._count._all,
      durationS: r._sum.durationS ?? 0,
      sizeBytes: Number(r._sum.sizeBytes ?? 0n),
    }));
  }

  appIds(): Promise<string[]> {
    return this.prisma.app.findMany({ where: { deletedAt: null }, select: { id: true } }).then((rows) => rows.map((r) => r.id));
  }

  /** Every camera that is not deleted (ids only: their presence keys are looked up in Redis). */
  cameras(): Promise<LiveCamera[]> {
    return this.prisma.camera.findMany({ where: { deletedAt: null }, select: { id: true, appId: true } });
  }

  async openHlsSessions(): Promise<Counted<'appId' | 'status'>[]> {
    const rows = await this.prisma.hlsSession.groupBy({
      by: ['appId', 'status'],
      where: { status: { in: ['starting', 'live'] } },
      _count: { _all: true },
    });
    return rows.map((r) => ({ appId: r.appId, status: r.status, count: r._count._all }));
  }

  /** HLS sessions that were stopped or failed, ever (rows of deleted apps go with them). */
  async endedHlsSessions(): Promise<Counted<'status'>[]> {
    const rows = await this.prisma.hlsSession.groupBy({
      by: ['status'],
      where: { status: { in: ['stopped', 'failed'] } },
      _count: { _all: true },
    });
    return rows.map((r) => ({ status: r.status, count: r._count._all }));
  }

  async deliveries(): Promise<Counted<'appId' | 'status'>[]> {
    const rows = await this.prisma.webhookDelivery.groupBy({ by: ['appId', 'status'], _count: { _all: true } });
    return rows.map((r) => ({ appId: r.appId, status: r.status, count: r._count._all }));
  }

  /**
   * Pending deliveries per app, as a queue would count them (docs/adr/0019-webhook-deliveries-claimed-from-postgres.md):
   * `active` under a live lease (an attempt running), `waiting` due and unclaimed, `delayed` waiting for a retry.
   */
  async pendingDeliveries(): Promise<PendingDeliveries[]> {
    const rows = await this.prisma.$queryRaw<{ appId: string; active: bigint; waiting: bigint; delayed: bigint }[]>`
      SELECT "appId",
             count(*) FILTER (WHERE "leasedUntil" >= now() AT TIME ZONE 'UTC') AS active,
             count(*) FILTER (WHERE ("leasedUntil" IS NULL OR "leasedUntil" < now() AT TIME ZONE 'UTC')
                                AND "nextAttemptAt" <= now() AT TIME ZONE 'UTC') AS waiting,
             count(*) FILTER (WHERE ("leasedUntil" IS NULL OR "leasedUntil" < now() AT TIME ZONE 'UTC')
                                AND "nextAttemptAt" > now() AT TIME ZONE 'UTC') AS delayed
      FROM "WebhookDelivery" WHERE status = 'pending' GROUP BY "appId"`;
    return rows.map((r) => ({ appId: r.appId, active: Number(r.active), waiting: Number(r.waiting), delayed: Number(r.delayed) }));
  }
}
