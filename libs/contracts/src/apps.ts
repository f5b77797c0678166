import { z } from 'zod';
import { AppId } from './ids.js';
import { AppQuotas, QuotaOverrides } from './quotas.js';
import { AppRateLimits, RateLimitOverrides } from './rate-limits.js';
import { RecordingFormat, RecordingModeSetting } from './recordings.js';
import { safeText, withoutControlCharacters } from './text.js';

const name = safeText(100);

/** Where the app's webhooks are POSTed: an absolute http(s) URL. */
export const WebhookUrl = withoutControlCharacters(z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2048));

const count = (max: number) => z.number().int().min(1).max(max);

/**
 * Storage and recording-length settings of an app; null returns a setting to the operator's default
 * (TALLY_MAX_STORAGE_MB, TALLY_RECORDING_RETENTION_DAYS, TALLY_MAX_RECORDING_DURATION_S; unset: none).
 */
export const StorageSettingsBody = {
  /** Admin only: MB the app's complete recordings and ladders may hold; a recording start at or past it is 429 app.storage. */
  maxStorageMb: count(100_000_000).nullable().optional(),
  /** Admin only: days an ended recording is kept before the sweep deletes it (webhook recording.deleted). */
  recordingRetentionDays: count(36_500).nullable().optional(),
  /** Admin only: seconds a recording may run before it is stopped (complete, endReason max_duration). */
  maxRecordingDurationS: count(31_536_000).nullable().optional(),
};

export const CreateAppBody = z.strictObject({ name, ...StorageSettingsBody }).meta({ id: 'CreateAppBody' });
export type CreateAppBody = z.infer<typeof CreateAppBody>;

/** Fields only the admin key may change; an app's own key may change the others. */
export const ADMIN_ONLY_APP_FIELDS = [
  'name',
  'quotas',
  'guarantees',
  'rateLimits',
  'maxStorageMb',
  'recordingRetentionDays',
  'maxRecordingDurationS',
] as const;

export const UpdateAppBody = z
  .strictObject({
    /** Admin only. */
    name: name.optional(),
    /** Admin only: caps per class. */
    quotas: QuotaOverrides.optional(),
    /** Admin only: guarantees (floors) per class; all apps' guarantees together must fit the pool (409 otherwise). */
    guarantees: QuotaOverrides.optional(),
    /** Admin only: the app's request and start rates (docs/rate-limits.md); null restores a default. */
    rateLimits: RateLimitOverrides.optional(),
    /** Where webhooks go; null stops them (events are still recorded). */
    webhookUrl: WebhookUrl.nullable().optional(),
    /** `auto` picks an egress mode per recording; a mode forces it. */
    recordingMode: RecordingModeSetting.optional(),
    /** Whether a recording whose mode does not fit may fall back to a cheaper mode. */
    recordingFallback: z.boolean().optional(),
    /** Which file a single publisher's recording gives (docs/recordings.md). */
    recordingFormat: RecordingFormat.optional(),
    /** Whether every recording gets a VOD ladder as soon as it is complete. */
    transcodeLadder: z.boolean().optional(),
    /** Let anyone watch the app's cameras without a viewer token or key. */
    publicCameras: z.boolean().optional(),
    ...StorageSettingsBody,
  })
  .meta({ id: 'UpdateAppBody' });
export type UpdateAppBody = z.infer<typeof UpdateAppBody>;

export const AppView = z
  .object({
    id: AppId,
    name: z.string(),
    createdAt: z.iso.datetime(),
    quotas: AppQuotas,
    /** The caps the operator set; the others are the default cap sized on one node of the pool. */
    explicitQuotas: QuotaOverrides,
    /** Guarantees (floors) per class: capacity kept free for the app while it does not use it; 0 where none. */
    guarantees: AppQuotas,
    /** Requests and starts per minute the app's keys may make, shared by every API replica. */
    rateLimits: AppRateLimits,
    usage: z.object({ streams: z.number().int() }),
    webhookUrl: z.string().nullable(),
    /** Whether a webhook signing secret was set; the secret itself is shown only when rotated. */
    webhookSecretSet: z.boolean(),
    recordingMode: RecordingModeSetting,
    recordingFallback: z.boolean(),
    recordingFormat: RecordingFormat,
    transcodeLadder: z.boolean(),
    publicCameras: z.boolean(),
    /** In effect (the app's own setting, else the operator's default); null: none. */
    maxStorageMb: z.number().int().nullable(),
    recordingRetentionDays: z.number().int().nullable(),
    maxRecordingDurationS: z.number().int().nullable(),
    /** The settings the admin set for this app; absent ones follow the operator's default. */
    explicitStorage: z.object({
      maxStorageMb: z.number().int().optional(),
      recordingRetentionDays: z.number().int().optional(),
      maxRecordingDurationS: z.number().int().optional(),
    }),
  })
  .meta({ id: 'App' });
export type AppView = z.infer<typeof AppView>;

export const AppList = z.object({ items: z.array(AppView) }).meta({ id: 'AppList' });
export type AppList = z.infer<typeof AppList>;

export const AppParams = z.object({ appId: AppId });
