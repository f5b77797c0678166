import { z } from 'zod';

/** The Redis pub/sub channel on which every API replica hears what its in-process caches must drop. */
export const INVALIDATION_CHANNEL = 'tally:invalidate';

/**
 * A revoked key, a deleted app (its keys and streams), an ended stream, an app whose policy (rate
 * limits) changed; `all`: messages may have been missed.
 */
export const Invalidation = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('key'), keyId: z.string() }),
  z.object({ kind: z.literal('app'), appId: z.string() }),
  z.object({ kind: z.literal('stream'), streamId: z.string() }),
  z.object({ kind: z.literal('policy'), appId: z.string() }),
  z.object({ kind: z.literal('all') }),
]);
export type Invalidation = z.infer<typeof Invalidation>;
