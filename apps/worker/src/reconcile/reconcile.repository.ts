import { Injectable } from '@nestjs/common';
import { toAppPolicy } from '@tally/admission';
import type { AppQuotaPolicy } from '@tally/capacity';
import { PrismaService, type Stream } from '@tally/db';

@Injectable()
export class ReconcileRepository {
  constructor(private readonly prisma: PrismaService) {}

  openStreams(): Promise<Stream[]> {
    return this.prisma.stream.findMany({ where: { status: { not: 'ended' } } });
  }

  async markEnded(id: string, at: Date, reason: string): Promise<boolean> {
    const { count } = await this.prisma.stream.updateMany({
      where: { id, status: { not: 'ended' } },
      data: { status: 'ended', endedAt: at, endReason: reason, participants: 0, publishers: 0 },
    });
    return count > 0;
  }

  async appPolicies(): Promise<AppQuotaPolicy[]> {
    return (await this.prisma.app.findMany({ select: { id: true, limits: true } })).map(toAppPolicy);
  }
}
