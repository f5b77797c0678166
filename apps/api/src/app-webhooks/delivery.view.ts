import { WebhookDisabledReason, type WebhookEndpointView, WebhookEventType, type WebhookDeliveryView } from '@tally/contracts';
import type { DeliveryRow, EndpointRow } from './app-webhooks.repository.js';

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

export function toEndpointView(row: EndpointRow, now: Date): WebhookEndpointView {
  const previousUntil = row.webhookSecretPreviousUntil;
  return {
    url: row.webhookUrl,
    status: row.webhookDisabledAt === null ? 'enabled' : 'disabled',
    disabledAt: row.webhookDisabledAt?.toISOString() ?? null,
    disabledReason: row.webhookDisabledReason === null ? null : WebhookDisabledReason.parse(row.webhookDisabledReason),
    failingSince: row.webhookFailingSince?.toISOString() ?? null,
    secretSet: row.webhookSecret !== null,
    previousSecretExpiresAt: previousUntil !== null && previousUntil > now ? previousUntil.toISOString() : null,
  };
}
