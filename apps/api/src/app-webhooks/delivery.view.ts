import { WebhookEventType, type WebhookDeliveryView } from '@tally/contracts';
import type { DeliveryRow } from './app-webhooks.repository.js';

export function toDeliveryView(row: DeliveryRow): WebhookDeliveryView {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: WebhookEventType.parse(row.event.type),
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}
