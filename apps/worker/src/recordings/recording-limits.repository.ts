import { Injectable } from '@nestjs/common';
import { PrismaService, type Recording } from '@tally/db';

export type AppRecordingSettings = Readonly<{
  id: string;
  recordingRetentionDays: number | null;
  maxRecordingDurationS: number | null;
}>;

/** How many rows one sweep deletes per app: a backlog after a long downtime drains over several sweeps. */
const RETENTION_BATCH = 200;

/** The rows the retention and length limits act on; every query is scoped by appId. */
@Injectable()
export class RecordingLimitsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Live apps with their own settings (null: the operator's default). */
  apps(): Promise<AppRecordingSettings[]> {
    return this.prisma.app.findMany({
      where: { deletedAt: null },
      select: { id: true, recordingRetentionDays: true, maxRecordingDurationS: true },
    });
  }

  /** The app's finished recordings that ended before `cutoff`, oldest first. */
  endedBefore(appId: string, cutoff: Date): Promise<Recording[]> {
    return this.prisma.recording.findMany({
      where: { appId, status: { in: ['complete', 'failed'] }, endedAt: { lt: cutoff } },
      orderBy: { endedAt: 'asc' },
      take: RETENTION_BATCH,
    });
  }

  /** The app's recordings that record now (one asked to stop before is asked again: a stop is idempotent). */
  recording(appId: string): Promise<Recording[]> {
    return this.prisma.recording.findMany({ where: { appId, status: 'active' } });
  }
}
