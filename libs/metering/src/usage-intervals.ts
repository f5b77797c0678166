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

/** A connection Tally itself holds: a camera's ingest socket, or one live viewer of a camera. */
export type ConnectionUsage = Readonly<{
  meter: 'camera' | 'camera_viewer';
  /** Unique per connection (made when it opened). */
  connectionId: string;
  appId: string;
  cameraId: string;
  startedAt: Date | undefined;
  endedAt: Date | undefined;
}>;

/** One attempt of a VOD ladder on a node's agent, as its reports tell it. */
export type LadderUsage = Readonly<{
  appId: string;
  recordingId: string;
  attempt: number;
  hardware: 'gpu' | 'cpu';
  startedAt: Date | undefined;
  endedAt: Date | undefined;
}>;

/** How often a process marks the connections it holds (cameras, camera viewers) as still open. */
export const CONNECTION_SEEN_MS = 10_000;
/** A connection not marked seen for this long belongs to a process that died: it ends when last seen. */
export const CONNECTION_LAPSE_MS = 60_000;

/** A count is one second weighted by the count: `quantity` = weight × seconds = the count. */
const COUNT_SPAN_MS = 1000;

/**
 * Writes the intervals LiveKit's webhooks, Tally's own connections and the agents' reports tell about. Each is keyed by LiveKit's own id, and a start
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

  async connection(usage: ConnectionUsage, changedAt: Date): Promise<void> {
    await this.upsert({
      id: `${usage.meter}:${usage.connectionId}`,
      appId: usage.appId,
      meter: usage.meter,
      dimension: '',
      source: usage.cameraId,
      startedAt: usage.startedAt,
      endedAt: usage.endedAt,
      changedAt,
    });
  }

  async ladder(usage: LadderUsage, changedAt: Date): Promise<void> {
    await this.upsert({
      id: `ladder:${usage.recordingId}:${usage.attempt}`,
      appId: usage.appId,
      meter: 'ladder',
      dimension: usage.hardware,
      source: usage.recordingId,
      startedAt: usage.startedAt,
      endedAt: usage.endedAt,
      changedAt,
    });
  }

  /**
   * Open connections of this process still run at `now`: if the process dies, the reconciler ends
   * them at the last such time.
   */
  async seen(ids: readonly string[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.$executeRaw`
      UPDATE "UsageInterval" SET "lastSeenAt" = ${at(now)} WHERE id = ANY(${[...ids]}::text[]) AND "endedAt" IS NULL`;
  }

  /**
   * Adds `count` to the app's count of `meter` in the hour starting at `hour`: one row per app, meter
   * and hour, spanning the hour's first second with the count as its weight, so every reader, the
   * roll-up and the totals handle it as any interval. The addition is one atomic statement.
   */
  async addCount(meter: 'hls_bytes', appId: string, hour: Date, count: number, changedAt: Date): Promise<void> {
    const end = new Date(hour.getTime() + COUNT_SPAN_MS);
    await this.prisma.$executeRaw`
      INSERT INTO "UsageInterval" (id, "appId", meter, dimension, weight, "startedAt", "endedAt", "changedAt")
      VALUES (${`${meter}:${appId}:${hour.toISOString()}`}, ${appId}, ${meter}, '', ${count}::float8, ${at(hour)}, ${at(end)}, ${at(changedAt)})
      ON CONFLICT (id) DO UPDATE SET weight = "UsageInterval".weight + EXCLUDED.weight, "changedAt" = EXCLUDED."changedAt"`;
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
