import { z } from 'zod';

/** Ids are opaque, prefixed, url-safe; room names are derived from them only. */
export const AppId = z.string().regex(/^app_[a-z0-9]{16}$/, 'must be an app id');
export const KeyId = z.string().regex(/^key_[a-z0-9]{16}$/, 'must be a key id');
export const StreamId = z.string().regex(/^str_[a-z0-9]{16}$/, 'must be a stream id');
