import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';

/**
 * What an app's recordings hold, summed in PostgreSQL on every read rather than kept in a counter:
 * a recording's bytes only change when it completes, gets a ladder or is deleted, and each of those
 * is already a row write, so the sum can never drift from the rows (a counter could, on a crash
 * between the file and the row). The (appId, status) index keeps it to the app's complete rows.
 */
@Injectable()
export class StorageRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Complete recordings' sizes (local files and objects alike), plus each ready ladder's renditions:
   * constant-bitrate HLS of the recording's duration, Σ bitrateKbps × 125 × durationS bytes (the agent
   * that writes them reports no sizes).
   */
  async bytesHeld(appId: string): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ bytes: string | null }[]>`
      SELECT (
        COALESCE(SUM(r."sizeBytes"), 0)
        + COALESCE(SUM(CASE WHEN r."ladderStatus" = 'ready' THEN
            (SELECT COALESCE(SUM((x->>'bitrateKbps')::numeric), 0) FROM jsonb_array_elements(COALESCE(r."ladderRenditions", '[]'::jsonb)) x)
            * 125 * COALESCE(r."durationS", 0)::numeric
          END), 0)
      )::bigint::text AS bytes
      FROM "Recording" r
      WHERE r."appId" = ${appId} AND r.status = 'complete'`;
    return Number(row?.bytes ?? 0);
  }
}
