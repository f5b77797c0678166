import { z } from 'zod';
import { AppId } from './ids.js';

const name = z.string().trim().min(1).max(100);

export const AppQuotas = z
  .object({
    /** Concurrent streams (created or live). */
    maxStreams: z.number().int().min(0).max(100_000),
  })
  .meta({ id: 'AppQuotas' });
export type AppQuotas = z.infer<typeof AppQuotas>;

export const CreateAppBody = z.strictObject({ name }).meta({ id: 'CreateAppBody' });
export type CreateAppBody = z.infer<typeof CreateAppBody>;

export const UpdateAppBody = z
  .strictObject({
    name: name.optional(),
    /** A null limit returns to the deployment default. */
    quotas: z.strictObject({ maxStreams: AppQuotas.shape.maxStreams.nullable().optional() }).optional(),
  })
  .meta({ id: 'UpdateAppBody' });
export type UpdateAppBody = z.infer<typeof UpdateAppBody>;

export const AppView = z
  .object({
    id: AppId,
    name: z.string(),
    createdAt: z.iso.datetime(),
    quotas: AppQuotas,
    usage: z.object({ streams: z.number().int() }),
  })
  .meta({ id: 'App' });
export type AppView = z.infer<typeof AppView>;

export const AppList = z.object({ items: z.array(AppView) }).meta({ id: 'AppList' });
export type AppList = z.infer<typeof AppList>;

export const AppParams = z.object({ appId: AppId });
