import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';

export type DisabledReason = 'gone' | 'failing';

/** An app endpoint's health on its row; each write is conditional, so concurrent attempts agree. */
@Injectable()
export class EndpointHealthRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The first failure of a run of failures; later ones keep the first time. */
  async markFailing(appId: string, at: Date): Promise<void> {
    await this.prisma.app.updateMany({ where: { id: appId, webhookFailingSince: null }, data: { webhookFailingSince: at } });
  }

  async markHealthy(appId: string): Promise<void> {
    await this.prisma.app.updateMany({ where: { id: appId, webhookFailingSince: { not: null } }, data: { webhookFailingSince: null } });
  }

  async disable(appId: string, at: Date, reason: DisabledReason): Promise<void> {
    await this.prisma.app.updateMany({
      where: { id: appId, webhookDisabledAt: null },
      data: { webhookDisabledAt: at, webhookDisabledReason: reason },
    });
  }
}
