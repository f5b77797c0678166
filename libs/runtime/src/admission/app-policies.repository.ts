import { Injectable } from '@nestjs/common';
import { POLICY_COLUMNS, toAppPolicy } from '@tally/admission';
import type { AppQuotaPolicy } from '@tally/capacity';
import { PrismaService } from '@tally/db';

/** Apps' quota policies as admission reads them from PostgreSQL, in both processes. */
@Injectable()
export class AppPoliciesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Every live app's quota policy (listings, gauges, the ledger's copy at startup). */
  async all(): Promise<AppQuotaPolicy[]> {
    const rows = await this.prisma.app.findMany({ where: { deletedAt: null }, select: POLICY_COLUMNS });
    return rows.map(toAppPolicy);
  }

  async one(appId: string): Promise<AppQuotaPolicy | undefined> {
    const row = await this.prisma.app.findFirst({ where: { id: appId, deletedAt: null }, select: POLICY_COLUMNS });
    return row ? toAppPolicy(row) : undefined;
  }
}
