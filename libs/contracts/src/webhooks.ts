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
  'recording.deleted',
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
  /** The recording as it was when its files and row were deleted (by DELETE or the retention sweep). */
  'recording.deleted': RecordingView;
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

/** A day, as Svix does: time to roll the new secret out to every receiver. */
export const DEFAULT_SECRET_GRACE_S = 86_400;

export const RotateWebhookSecretBody = z
  .strictObject({
    /** How long the previous secret keeps signing next to the new one (0: it stops at once). At most 7 days. */
    gracePeriodS: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .default(DEFAULT_SECRET_GRACE_S),
  })
  .meta({ id: 'RotateWebhookSecretBody' });
export type RotateWebhookSecretBody = z.infer<typeof RotateWebhookSecretBody>;

/** Shown once, when rotated. */
export const WebhookSecretView = z
  .object({
    /** `whsec_` + base64: give it to a Standard Webhooks library as is. */
    secret: z.string(),
    /** Until then every delivery also carries a signature made with the previous secret; null when there is none. */
    previousSecretExpiresAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebhookSecret' });
export type WebhookSecretView = z.infer<typeof WebhookSecretView>;

export const WebhookEndpointStatus = z.enum(['enabled', 'disabled']);
export type WebhookEndpointStatus = z.infer<typeof WebhookEndpointStatus>;

/** `gone`: the receiver answered 410; `failing`: every attempt failed for TALLY_WEBHOOK_DISABLE_AFTER_DAYS. */
export const WebhookDisabledReason = z.enum(['gone', 'failing']);
export type WebhookDisabledReason = z.infer<typeof WebhookDisabledReason>;

/** The app's webhook endpoint: where it is, whether deliveries go there, and its signing secrets' state. */
export const WebhookEndpointView = z
  .object({
    url: z.string().nullable(),
    /** `disabled`: deliveries are not attempted (they end `dead`, lastError "endpoint disabled") until re-enabled. */
    status: WebhookEndpointStatus,
    disabledAt: z.iso.datetime().nullable(),
    disabledReason: WebhookDisabledReason.nullable(),
    /** Since when every attempt has failed; null after any success. */
    failingSince: z.iso.datetime().nullable(),
    secretSet: z.boolean(),
    previousSecretExpiresAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpointView = z.infer<typeof WebhookEndpointView>;
