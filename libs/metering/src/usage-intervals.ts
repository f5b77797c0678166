import { Prisma, type PrismaClient } from '@tally/db';
import { at } from './usage-sql.js';

export type ParticipantRole = 'publisher' | 'subscriber';

/** One participant event's view of its interval: either end may be unknown to it. */
export type ParticipantUsage = Readonly<{
  appId: string;
  sid: string;
  room: string;
  role: ParticipantRole;
  joinedAt: Date | undefined;
  leftAt: Date | undefined;
}>;

/** One ingress event's view of a publishing session: LiveKit's own start and end. */
export type IngressUsage = Readonly<{
  appId: string;
  livekitIngressId: string;
  transcoded: boolean;
  startedAt: Date;
  endedAt: Date | undefined;
}>;

/**
 * Writes the intervals LiveKit's webhooks tell about. Each is keyed by LiveKit's own id, and a start
 * or an end is set only while it is unset, so duplicated, reordered or repeated events leave one
 * interval with the first-known times (docs/adr/0028-usage-metering.md).
 */
export class UsageIntervals {
  constructor(private readonly prisma: PrismaClient) {}

  async participant(usage: ParticipantUsage, changedAt: Date): Promise<void> {
    await this.upsert({
      id: `participant:${usage.sid}`,
      appId: usage.appId,
      meter: 'participant',
      dimension: usage.role,
      source: usage.room,
      startedAt: usage.joinedAt,
      endedAt: usage.leftAt,
      changedAt,
    });
  }

  async ingress(usage: IngressUsage, changedAt: Date): Promise<void> {
    await this.upsert({
      id: `ingress:${usage.livekitIngressId}:${usage.startedAt.getTime()}`,
      appId: usage.appId,
      meter: 'ingress',
      dimension: usage.transcoded ? 'transcoded' : 'forwarded',
      source: usage.livekitIngressId,
      startedAt: usage.startedAt,
      endedAt: usage.endedAt,
      changedAt,
    });
  }

  private async upsert(row: {
    id: string;
    appId: string;
    meter: string;
    dimension: string;
    source: string;
    startedAt: Date | undefined;
    endedAt: Date | undefined;
    changedAt: Date;
  }): Promise<void> {
    const startedAt = row.startedAt ? at(row.startedAt) : Prisma.sql`NULL::timestamp`;
    const endedAt = row.endedAt ? at(row.endedAt) : Prisma.sql`NULL::timestamp`;
    await this.prisma.$executeRaw`
      INSERT INTO "UsageInterval" (id, "appId", meter, dimension, source, "startedAt", "endedAt", "changedAt")
      VALUES (${row.id}, ${row.appId}, ${row.meter}, ${row.dimension}, ${row.source}, ${startedAt}, ${endedAt}, ${at(row.changedAt)})
      ON CONFLICT (id) DO UPDATE SET
        "startedAt" = COALESCE("UsageInterval"."startedAt", EXCLUDED."startedAt"),
        "endedAt" = COALESCE("UsageInterval"."endedAt", EXCLUDED."endedAt"),
        "changedAt" = EXCLUDED."changedAt"
      WHERE ("UsageInterval"."startedAt" IS NULL AND EXCLUDED."startedAt" IS NOT NULL)
         OR ("UsageInterval"."endedAt" IS NULL AND EXCLUDED."endedAt" IS NOT NULL)`;
  }
}
