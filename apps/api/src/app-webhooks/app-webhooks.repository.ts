import { Injectable } from '@nestjs/common';
import type { WebhookDeliveryStatus } from '@tally/contracts';
import { type App, PrismaService, type WebhookDelivery } from '@tally/db';
import { type StagedEvent, WebhookOutbox } from '@tally/webhooks';

export type DeliveryRow = WebhookDelivery & { event: { type: string } };

const withEventType = { event: { select: { type: true } } } as const;

const endpointFields = {
  webhookUrl: true,
  webhookSecret: true,
  webhookSecretPreviousUntil: true,
  webhookFailingSince: true,
  webhookDisabledAt: true,
  webhookDisabledReason: true,
} as const;
export type EndpointRow = Pick<App, keyof typeof endpointFields>;

@Injectable()
export class AppWebhooksRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: WebhookOutbox,
  ) {}

  /**
   * Makes `sealed` the current secret; the current one, if any, becomes the previous one until
   * `previousUntil` (null: dropped now). Undefined when the app does not exist.
   */
  async rotateSecret(appId: string, sealed: string, previousUntil: Date | null): Promise<{ previousUntil: Date | null } | undefined> {
    // One statement, so two concurrent rotations cannot both keep the same previous secret.
    const rows = await this.prisma.$queryRaw<{ previousUntil: Date | null }[]>`
      UPDATE "App" SET
        "webhookSecretPrevious" = CASE WHEN ${previousUntil}::timestamp IS NULL THEN NULL ELSE "webhookSecret" END,
        "webhookSecretPreviousUntil" = CASE WHEN "webhookSecret" IS NULL THEN NULL ELSE ${previousUntil}::timestamp END,
        "webhookSecret" = ${sealed},
        "updatedAt" = now()
      WHERE id = ${appId}
      RETURNING "webhookSecretPreviousUntil" AS "previousUntil"`;
    return rows[0];
  }

  endpoint(appId: string): Promise<EndpointRow | null> {
    return this.prisma.app.findUnique({ where: { id: appId }, select: endpointFields });
  }

  /** Clears the disabled state and the failure run; null when the app does not exist. */
  async enableEndpoint(appId: string): Promise<EndpointRow | null> {
    const { count } = await this.prisma.app.updateMany({
      where: { id: appId },
      data: { webhookDisabledAt: null, webhookDisabledReason: null, webhookFailingSince: null },
    });
    return count === 0 ? null : this.endpoint(appId);
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
