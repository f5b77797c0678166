import { z } from 'zod';
import { AppId } from './ids.js';
import { AppQuotas, QuotaOverrides } from './quotas.js';

const name = z.string().trim().min(1).max(100);

export const CreateAppBody = z.strictObject({ name }).meta({ id: 'CreateAppBody' });
export type CreateAppBody = z.infer<typeof CreateAppBody>;

export const UpdateAppBody = z
  .strictObject({
    name: name.optional(),
    quotas: QuotaOverrides.optional(),
  })
  .meta({ id: 'UpdateAppBody' });
export type UpdateAppBody = z.infer<typeof UpdateAppBody>;

export const AppView = z
  .object({
    id: AppId,
    name: z.string(),
    createdAt: z.iso.datetime(),
    quotas: AppQuotas,
    /** The limits the operator set; the others are the app's share of the node pool. */
    explicitQuotas: QuotaOverrides,
    usage: z.object({ streams: z.number().int() }),
  })
  .meta({ id: 'App' });
export type AppView = z.infer<typeof AppView>;

export const AppList = z.object({ items: z.array(AppView) }).meta({ id: 'AppList' });
export type AppList = z.infer<typeof AppList>;

export const AppParams = z.object({ appId: AppId });
