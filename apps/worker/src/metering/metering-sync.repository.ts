import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tally/db';

/** Open participant intervals, as the reconciler checks them against LiveKit. */
export type OpenParticipant = Readonly<{ id: string; sid: string; room: string; lastSeenAt: Date | null; startedAt: Date | null }>;

const at = (instant: Date): Prisma.Sql => Prisma.sql`(${instant.toISOString()}::timestamptz AT TIME ZONE 'UTC')`;

/**
 * The worker's side of metering (docs/adr/0028-usage-metering.md): usage intervals copied from the
 * rows the lifecycles write, and the closing of intervals whose end event was lost.
 */
@Injectable()
export class MeteringSyncRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Copies streams, recordings, HLS sessions and stored files that ran or changed since `since`; returns rows changed. */
  copyFromRows(since: Date, now: Date): Promise<number> {
    return this.prisma.$executeRaw`
      INSERT INTO "UsageInterval" (id, "appId", meter, dimension, weight, "startedAt", "endedAt", "changedAt")
      SELECT 'stream:' || s.id, s."appId", 'stream', '', 1, s."startedAt", s."endedAt", ${at(now)} FROM "Stream" s
        WHERE s."startedAt" IS NOT NULL AND (s."endedAt" IS NULL OR s."endedAt" >= ${at(since)})
      UNION ALL
      SELECT 'recording:' || r.id, r."appId", 'recording', r.mode::text, 1, r."startedAt", r."endedAt", ${at(now)} FROM "Recording" r
        WHERE r."startedAt" IS NOT NULL AND (r."endedAt" IS NULL OR r."updatedAt" >= ${at(since)})
      UNION ALL
      SELECT 'hls:' || h.id, h."appId", 'hls', '', 1, h."createdAt", h."stoppedAt", ${at(now)} FROM "HlsSession" h
        WHERE h.status IN ('live', 'stopped') AND (h."stoppedAt" IS NULL OR h."stoppedAt" >= ${at(since)})
      UNION ALL
      SELECT 'storage:' || r.id, r."appId", 'storage', '', r."sizeBytes"::float8, r."endedAt", NULL, ${at(now)} FROM "Recording" r
        WHERE r.status = 'complete' AND r."sizeBytes" IS NOT NULL AND r."endedAt" IS NOT NULL AND r."updatedAt" >= ${at(since)}
      ON CONFLICT (id) DO UPDATE SET
        dimension = EXCLUDED.dimension,
        weight = EXCLUDED.weight,
        "startedAt" = EXCLUDED."startedAt",
        "endedAt" = CASE WHEN "UsageInterval".meter = 'storage' THEN "UsageInterval"."endedAt" ELSE EXCLUDED."endedAt" END,
        "changedAt" = EXCLUDED."changedAt"
      WHERE ("UsageInterval".dimension, "UsageInterval".weight, "UsageInterval"."startedAt")
              IS DISTINCT FROM (EXCLUDED.dimension, EXCLUDED.weight, EXCLUDED."startedAt")
         OR ("UsageInterval".meter <> 'storage' AND "UsageInterval"."endedAt" IS DISTINCT FROM EXCLUDED."endedAt")`;
  }

  /** Stored files still there were seen now; those whose recording is gone end when last seen. */
  async sweepStorage(now: Date): Promise<number> {
    await this.prisma.$executeRaw`
      UPDATE "UsageInterval" u SET "lastSeenAt" = ${at(now)}
      WHERE u.meter = 'storage' AND u."endedAt" IS NULL AND EXISTS (SELECT 1 FROM "Recording" r WHERE r.id = substr(u.id, 9))`;
    return this.prisma.$executeRaw`
      UPDATE "UsageInterval" u SET "endedAt" = GREATEST(u."startedAt", COALESCE(u."lastSeenAt", u."startedAt")), "changedAt" = ${at(now)}
      WHERE u.meter = 'storage' AND u."endedAt" IS NULL AND NOT EXISTS (SELECT 1 FROM "Recording" r WHERE r.id = substr(u.id, 9))`;
  }

  /** Ingress sessions whose ingress no longer publishes (or is gone) end when its row last changed, or when last seen. */
  closeIngresses(now: Date): Promise<number> {
    return this.prisma.$executeRaw`
      UPDATE "UsageInterval" u
      SET "endedAt" = GREATEST(u."startedAt", COALESCE(
            (SELECT i."updatedAt" FROM "Ingress" i WHERE i."livekitIngressId" = u.source), u."lastSeenAt", u."startedAt")),
          "changedAt" = ${at(now)}
      WHERE u.meter = 'ingress' AND u."endedAt" IS NULL
        AND NOT EXISTS (SELECT 1 FROM "Ingress" i WHERE i."livekitIngressId" = u.source AND i.status = 'publishing' AND i."deletedAt" IS NULL)`;
  }

  /**
   * Camera and camera-viewer connections whose API process stopped marking them seen (it died) end
   * when they were last seen, else at their start.
   */
  closeLapsedConnections(now: Date, lapseMs: number): Promise<number> {
    const cutoff = new Date(now.getTime() - lapseMs);
    return this.prisma.$executeRaw`
      UPDATE "UsageInterval" SET "endedAt" = GREATEST("startedAt", COALESCE("lastSeenAt", "startedAt")), "changedAt" = ${at(now)}
      WHERE meter IN ('camera', 'camera_viewer') AND "endedAt" IS NULL AND "startedAt" IS NOT NULL
        AND COALESCE("lastSeenAt", "startedAt") < ${at(cutoff)}`;
  }

  /** The hour the first usage began in, if any. */
  async firstUsageHour(): Promise<Date | undefined> {
    const first = await this.prisma.usageInterval.findFirst({
      where: { startedAt: { not: null } },
      orderBy: { startedAt: 'asc' },
      select: { startedAt: true },
    });
    return first?.startedAt ? new Date(Math.floor(first.startedAt.getTime() / 3_600_000) * 3_600_000) : undefined;
  }

  async openParticipants(): Promise<OpenParticipant[]> {
    const rows = await this.prisma.usageInterval.findMany({
      where: { meter: 'participant', endedAt: null, source: { not: null } },
      select: { id: true, source: true, lastSeenAt: true, startedAt: true },
    });
    return rows.map((r) => ({
      id: r.id,
      sid: r.id.slice('participant:'.length),
      room: r.source ?? '',
      lastSeenAt: r.lastSeenAt,
      startedAt: r.startedAt,
    }));
  }

  async seen(ids: readonly string[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.usageInterval.updateMany({ where: { id: { in: [...ids] }, endedAt: null }, data: { lastSeenAt: now } });
  }

  /** Ends intervals whose participant LiveKit no longer has, at the last time a sweep saw them (else their start). */
  close(ids: readonly string[], now: Date): Promise<number> {
    if (ids.length === 0) return Promise.resolve(0);
    return this.prisma.$executeRaw`
      UPDATE "UsageInterval" SET "endedAt" = GREATEST("startedAt", COALESCE("lastSeenAt", "startedAt")), "changedAt" = ${at(now)}
      WHERE id = ANY(${[...ids]}::text[]) AND "endedAt" IS NULL AND "startedAt" IS NOT NULL`;
  }
}
