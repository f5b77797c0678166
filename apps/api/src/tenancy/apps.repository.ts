import { Injectable } from '@nestjs/common';
import type { RecordingFormat, RecordingModeSetting, StoredRateLimits } from '@tally/contracts';
import { type App, PrismaService } from '@tally/db';
import { parseStoredLimits, type StoredLimits } from '@tally/admission';

export type AppChanges = {
  name?: string;
  limits?: StoredLimits;
  guarantees?: StoredLimits;
  rateLimits?: StoredRateLimits;
  webhookUrl?: string | null;
  /** A new webhook URL starts healthy: these are cleared with it. */
  webhookDisabledAt?: null;
  webhookDisabledReason?: null;
  webhookFailingSince?: null;
  recordingMode?: RecordingModeSetting;
  recordingFallback?: boolean;
  recordingFormat?: RecordingFormat;
  transcodeLadder?: boolean;
  publicCameras?: boolean;
  maxStorageMb?: number | null;
  recordingRetentionDays?: number | null;
  maxRecordingDurationS?: number | null;
};

/** An app's own storage and recording-length settings; null or absent: the operator's default. */
export type StorageChanges = Pick<AppChanges, 'maxStorageMb' | 'recordingRetentionDays' | 'maxRecordingDurationS'>;

/** Serialises guarantee changes: two concurrent PATCHes must not both fit a pool that holds only one. */
const GUARANTEES_LOCK = 7_316_001;

@Injectable()
export class AppsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(id: string, name: string, storage: StorageChanges = {}): Promise<App> {
    return this.prisma.app.create({ data: { id, name, ...storage } });
  }

  list(): Promise<App[]> {
    return this.prisma.app.findMany({ where: { deletedAt: null }, orderBy: { createdAt: 'asc' } });
  }

  /** A deleted app is not found: its row only stays until the worker has torn it down. */
  find(appId: string): Promise<App | null> {
    return this.prisma.app.findFirst({ where: { id: appId, deletedAt: null } });
  }

  async update(appId: string, changes: AppChanges): Promise<App | null> {
    const { count } = await this.prisma.app.updateMany({ where: { id: appId, deletedAt: null }, data: changes });
    return count === 0 ? null : this.find(appId);
  }

  /**
   * Marks the app deleted, revokes its keys and stops its webhooks in one transaction; false when it
   * was already deleted. The worker's sweep stops what it runs and purges it later (AppTeardown).
   */
  async markDeleted(appId: string, at: Date): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.app.updateMany({ where: { id: appId, deletedAt: null }, data: { deletedAt: at, webhookUrl: null } });
      if (count === 0) return false;
      await tx.apiKey.updateMany({ where: { appId, revokedAt: null }, data: { revokedAt: at } });
      return true;
    });
  }

  /**
   * Applies `changes` while no other guarantee can change (a transaction-scoped advisory lock), after
   * `approve` accepted them beside every other app's guarantees; `approve` throws to refuse.
   */
  async updateGuarded(appId: string, changes: AppChanges, approve: (others: StoredLimits[]) => void): Promise<App | null> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(${GUARANTEES_LOCK})::text`;
      const others = await tx.app.findMany({ where: { id: { not: appId }, deletedAt: null }, select: { guarantees: true } });
      approve(others.map((o) => parseStoredLimits(o.guarantees)));
      const { count } = await tx.app.updateMany({ where: { id: appId, deletedAt: null }, data: changes });
      return count === 0 ? null : tx.app.findUnique({ where: { id: appId } });
    });
  }
}
