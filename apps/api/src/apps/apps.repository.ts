import { Injectable } from '@nestjs/common';
import type { AppQuotaPolicy } from '@tally/capacity';
import type { RecordingModeSetting } from '@tally/contracts';
import { type App, PrismaService } from '@tally/db';
import { type StoredLimits, toAppPolicy } from '@tally/admission';

export type AppChanges = {
  name?: string;
  limits?: StoredLimits;
  webhookUrl?: string | null;
  recordingMode?: RecordingModeSetting;
  recordingFallback?: boolean;
  transcodeLadder?: boolean;
  publicCameras?: boolean;
};

@Injectable()
export class AppsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(id: string, name: string): Promise<App> {
    return this.prisma.app.create({ data: { id, name } });
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

  /** Every live app's quota policy for deriving fair shares. */
  async policies(): Promise<AppQuotaPolicy[]> {
    const rows = await this.prisma.app.findMany({ where: { deletedAt: null }, select: { id: true, limits: true } });
    return rows.map(toAppPolicy);
  }
}
