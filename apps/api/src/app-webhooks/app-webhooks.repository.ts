import { Injectable } from '@nestjs/common';
import type { WebhookDeliveryStatus } from '@tally/contracts';
import { PrismaService, type WebhookDelivery } from '@tally/db';
import { type StagedEvent, WebhookOutbox } from '@tally/webhooks';

export type DeliveryRow = WebhookDelivery & { event: { type: string } };

const withEventType = { event: { select: { type: true } } } as const;

@Injectable()
export class AppWebhooksRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: WebhookOutbox,
  ) {}

  /** False when the app does not exist. */
  async setSecret(appId: string, sealed: string): Promise<boolean> {
    const { count } = await this.prisma.app.updateMany({ where: { id: appId }, data: { webhookSecret: sealed } });
    return count > 0;
  }

  async webhookUrl(appId: string): Promise<{ webhookUrl: string | null } | null> {
    return this.prisma.app.findUnique({ where: { id: appId }, select: { webhookUrl: true } });
  }

  listDeliveries(appId: string, status: WebhookDeliveryStatus | undefined, limit: number): Promise<DeliveryRow[]> {
    return this.prisma.webhookDelivery.findMany({
      where: { appId, ...(status === undefined ? {} : { status }) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
      include: withEventType,
    });
  }

  findDelivery(appId: string, deliveryId: string): Promise<DeliveryRow | null> {
    return this.prisma.webhookDelivery.findFirst({ where: { id: deliveryId, appId }, include: withEventType });
  }

  /** A new pending delivery of the event to `url`, queued once written. */
  async redeliver(appId: string, eventId: string, url: string): Promise<DeliveryRow> {
    const staged: StagedEvent = await this.outbox.stageDelivery(this.prisma, appId, eventId, url);
    await this.outbox.flush([staged]);
    return this.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: staged.deliveryId }, include: withEventType });
  }
}
