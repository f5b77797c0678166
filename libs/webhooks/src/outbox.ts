import { newId, type WebhookEventBody, type WebhookEventData, type WebhookEventType } from '@tally/contracts';
import type { Prisma } from '@tally/db';
import type { DeliveryWake } from './delivery-wake.js';

/** What a transaction staged for delivery; hand it to `flush` once the transaction has committed. */
export type StagedEvent = Readonly<{ appId: string; eventId: string; deliveryId: string }>;

export type OutboxOptions = Readonly<{
  now?: () => Date;
  /** Called when the wake after commit failed; nothing is lost (the workers' dispatchers poll for due rows), only delayed. */
  onFlushError?: (error: unknown, deliveryIds: readonly string[]) => void;
}>;

/**
 * The transactional outbox for an app's webhooks. An event is a row written in the same
 * transaction as the state change it reports, with its pending delivery, which is the queue: the
 * workers claim due deliveries from PostgreSQL. After commit, `flush` wakes them:
 *
 * ```ts
 * const staged = await prisma.$transaction(async (tx) => {
 *   const [stream] = await tx.stream.updateManyAndReturn({ where: { id, status: 'created' }, data: { status: 'live' } });
 *   return stream ? outbox.stage(tx, stream.appId, 'stream.live', toStreamView(stream)) : undefined;
 * });
 * await outbox.flush([staged]);
 * ```
 *
 * A crash between commit and flush loses only the wake: the dispatchers' poll finds the row
 * (docs/adr/0019-webhook-deliveries-claimed-from-postgres.md).
 */
export class WebhookOutbox {
  private readonly now: () => Date;

  constructor(
    private readonly wake: DeliveryWake,
    private readonly options: OutboxOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Inside the caller's transaction: records the event (its payload is the exact body that will be
   * signed and sent) and, when the app has a webhook URL, a pending delivery to it. Resolves to
   * undefined when there is nothing to deliver (no URL, or the app is gone).
   */
  async stage<T extends WebhookEventType>(
    tx: Prisma.TransactionClient,
    appId: string,
    type: T,
    data: WebhookEventData[T],
  ): Promise<StagedEvent | undefined> {
    const app = await tx.app.findUnique({ where: { id: appId }, select: { webhookUrl: true } });
    if (!app) return undefined;
    const createdAt = this.now();
    const body: WebhookEventBody = { id: newId('evt'), type, appId, createdAt: createdAt.toISOString(), data };
    await tx.webhookEvent.create({ data: { id: body.id, appId, type, payload: body, createdAt } });
    if (app.webhookUrl === null) return undefined;
    return this.stageDelivery(tx, appId, body.id, app.webhookUrl);
  }

  /** A new delivery of an already recorded event (a redelivery), pending and due now. */
  async stageDelivery(tx: Prisma.TransactionClient, appId: string, eventId: string, url: string): Promise<StagedEvent> {
    const deliveryId = newId('dlv');
    const now = this.now();
    await tx.webhookDelivery.create({ data: { id: deliveryId, appId, eventId, url, createdAt: now, nextAttemptAt: now } });
    return { appId, eventId, deliveryId };
  }

  /** After commit: wakes the dispatchers for the staged deliveries' apps. Never throws. */
  async flush(staged: ReadonlyArray<StagedEvent | undefined>): Promise<void> {
    const deliveries = staged.flatMap((s) => (s ? [s] : []));
    if (deliveries.length === 0) return;
    try {
      await this.wake.wake(deliveries.map((d) => d.appId));
    } catch (error) {
      this.options.onFlushError?.(
        error,
        deliveries.map((d) => d.deliveryId),
      );
    }
  }
}
