import { Injectable } from '@nestjs/common';
import { POLICY_COLUMNS, toAppPolicy } from '@tally/admission';
import type { AppQuotaPolicy } from '@tally/capacity';
import { type Camera, PrismaService, type Stream } from '@tally/db';

@Injectable()
export class ReconcileRepository {
  constructor(private readonly prisma: PrismaService) {}

  openStreams(): Promise<Stream[]> {
    return this.prisma.stream.findMany({ where: { status: { not: 'ended' } } });
  }

  /** Cameras not deleted, plus the rows (deleted ones included) of `ids`. */
  camerasLiveOr(ids: readonly string[]): Promise<Camera[]> {
    return this.prisma.camera.findMany({ where: { OR: [{ deletedAt: null }, { id: { in: [...ids] } }] } });
  }

  async appPolicies(): Promise<AppQuotaPolicy[]> {
    return (await this.prisma.app.findMany({ where: { deletedAt: null }, select: POLICY_COLUMNS })).map(toAppPolicy);
  }

  async appPolicy(appId: string): Promise<AppQuotaPolicy | undefined> {
    const row = await this.prisma.app.findFirst({ where: { id: appId, deletedAt: null }, select: POLICY_COLUMNS });
    return row ? toAppPolicy(row) : undefined;
  }
}
