import { z } from 'zod';
import { AppId, WebhookDeliveryId, WebhookEventId } from './ids.js';
import { IngressView } from './ingresses.js';
import { RecordingView } from './recordings.js';
import { StreamView } from './streams.js';

/** The events an app's webhook URL receives. */
export const WEBHOOK_EVENT_TYPES = [
  'recording.started',
  'recording.completed',
  'recording.failed',
  'recording.ladder_ready',
  'recording.ladder_failed',
  'stream.live',
  'stream.ended',
  'ingress.refused',
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/**
 * An ingress that started receiving media again after its reservation lapsed, refused by admission
 * (the app's quota or the node's budget) and disconnected; `refusal` names the limit, as a 429 would.
 */
export const IngressRefusedData = z
  .object({
    ingress: IngressView,
    refusal: z.object({
      code: z.enum(['quota_exceeded', 'capacity_exhausted']),
      resource: z.string(),
      limit: z.number(),
      used: z.number(),
      requested: z.number(),
    }),
  })
  .meta({ id: 'IngressRefused' });
export type IngressRefusedData = z.infer<typeof IngressRefusedData>;

/** What each event carries in `data`: the resource as the API shows it at that moment. */
export type WebhookEventData = {
  'recording.started': RecordingView;
  'recording.completed': RecordingView;
  'recording.failed': RecordingView;
  'recording.ladder_ready': RecordingView;
  'recording.ladder_failed': RecordingView;
  'stream.live': StreamView;
  'stream.ended': StreamView;
  'ingress.refused': IngressRefusedData;
};

/** The JSON body POSTed to the app; `id` is stable across retries and redeliveries (deduplicate on it). */
export const WebhookEventBody = z
  .object({
    id: WebhookEventId,
    type: WebhookEventType,
    appId: AppId,
    createdAt: z.iso.datetime(),
    data: z.union([RecordingView, StreamView, IngressRefusedData]),
  })
  .meta({ id: 'WebhookEvent' });
export type WebhookEventBody = z.infer<typeof WebhookEventBody>;

export const WebhookDeliveryStatus = z.enum(['pending', 'delivered', 'dead']);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;

export const WebhookDeliveryView = z
  .object({
    id: WebhookDeliveryId,
    eventId: WebhookEventId,
    eventType: WebhookEventType,
    url: z.string(),
    status: WebhookDeliveryStatus,
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    lastAttemptAt: z.iso.datetime().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
    deliveredAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDeliveryView = z.infer<typeof WebhookDeliveryView>;

export const WebhookDeliveryList = z.object({ items: z.array(WebhookDeliveryView) }).meta({ id: 'WebhookDeliveryList' });
export type WebhookDeliveryList = z.infer<typeof WebhookDeliveryList>;

export const WebhookDeliveryListQuery = z.strictObject({
  status: WebhookDeliveryStatus.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type WebhookDeliveryListQuery = z.infer<typeof WebhookDeliveryListQuery>;

export const WebhookDeliveryParams = z.object({ appId: AppId, deliveryId: WebhookDeliveryId });

/** Shown once, when rotated. */
export const WebhookSecretView = z.object({ secret: z.string() }).meta({ id: 'WebhookSecret' });
export type WebhookSecretView = z.infer<typeof WebhookSecretView>;
