import { z } from 'zod';
import { AppId, KeyId } from './ids.js';

export const ApiKeyView = z
  .object({
    id: KeyId,
    appId: AppId,
    /** The first characters of the key, enough to tell keys apart. */
    prefix: z.string(),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKeyView = z.infer<typeof ApiKeyView>;

export const CreatedApiKey = ApiKeyView.extend({
  /** Shown once; only its hash is stored. */
  key: z.string(),
}).meta({ id: 'CreatedApiKey' });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

export const ApiKeyList = z.object({ items: z.array(ApiKeyView) }).meta({ id: 'ApiKeyList' });
export type ApiKeyList = z.infer<typeof ApiKeyList>;

export const KeyParams = z.object({ appId: AppId, keyId: KeyId });
