import { z } from 'zod';
import { safeText, withoutControlCharacters } from './text.js';
import { AppId, StreamId } from './ids.js';

export const StreamStatus = z.enum(['created', 'live', 'ended']);
export type StreamStatus = z.infer<typeof StreamStatus>;

export const CreateStreamBody = z.strictObject({ name: safeText(200) }).meta({ id: 'CreateStreamBody' });
export type CreateStreamBody = z.infer<typeof CreateStreamBody>;

export const StreamView = z
  .object({
    id: StreamId,
    appId: AppId,
    name: z.string(),
    /** The LiveKit room, derived from the app and stream ids. */
    room: z.string(),
    status: StreamStatus,
    publishers: z.number().int(),
    participants: z.number().int(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    endedAt: z.iso.datetime().nullable(),
    endReason: z.string().nullable(),
  })
  .meta({ id: 'Stream' });
export type StreamView = z.infer<typeof StreamView>;

export const StreamList = z.object({ items: z.array(StreamView) }).meta({ id: 'StreamList' });
export type StreamList = z.infer<typeof StreamList>;

export const StreamListQuery = z.strictObject({ status: StreamStatus.optional() });
export type StreamListQuery = z.infer<typeof StreamListQuery>;

export const StreamParams = z.object({ appId: AppId, streamId: StreamId });

export const TokenRole = z.enum(['publisher', 'viewer']);
export type TokenRole = z.infer<typeof TokenRole>;

export const CreateTokenBody = z
  .strictObject({
    identity: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_.:@-]+$/, 'letters, digits and _ . : @ - only'),
    role: TokenRole,
    /** Display name shown to other participants. */
    name: withoutControlCharacters(z.string().max(128)).optional(),
    ttlSeconds: z.number().int().min(60).max(86_400).default(3_600),
  })
  .meta({ id: 'CreateTokenBody' });
export type CreateTokenBody = z.infer<typeof CreateTokenBody>;

export const StreamToken = z
  .object({
    token: z.string(),
    /** Where LiveKit clients connect. */
    url: z.string(),
    identity: z.string(),
    role: TokenRole,
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'StreamToken' });
export type StreamToken = z.infer<typeof StreamToken>;
