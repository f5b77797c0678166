import { Injectable } from '@nestjs/common';
import type { AppQuotaPolicy } from '@tally/capacity';
import type { RecordingModeSetting } from '@tally/contracts';
import { type App, PrismaService } from '@tally/db';
import { type StoredLimits, toAppPolicy } from '@tally/admission';

export type AppChanges = {
  name?: string;
  limits?: StoredLimits;
  webhookUrl?: string | null;
  /** A new webhook URL starts healthy: these are cleared with it. */
  webhookDisabledAt?: null;
  webhookDisabledReason?: null;
  webhookFailingSince?: null;
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
    return this.prisma.app.findMany({ orderBy: { createdAt: 'asc' } });
  }

  find(appId: string): Promise<App | null> {
    return this.prisma.app.findUnique({ where: { id: appId } });
  }

  async update(appId: string, changes: AppChanges): Promise<App | null> {
    const { count } = await this.prisma.app.updateMany({ where: { id: appId }, data: changes });
    return count === 0 ? null : this.find(appId);
  }

  async delete(appId: string): Promise<boolean> {
    const { count } = await this.prisma.app.deleteMany({ where: { id: appId } });
    return count > 0;
  }

  /** Every app's quota policy for deriving fair shares. */
  async policies(): Promise<AppQuotaPolicy[]> {
    const rows = await this.prisma.app.findMany({ select: { id: true, limits: true } });
    return rows.map(toAppPolicy);
  }
}
