import { z } from 'zod';
import { AppId, IngressId, StreamId } from './ids.js';

export const IngressKind = z.enum(['rtmp', 'whip']);
export type IngressKind = z.infer<typeof IngressKind>;

/** inactive: nobody pushes yet (or any more); publishing: media flows into the room; ended: deleted; error: LiveKit gave up. */
export const IngressStatus = z.enum(['inactive', 'publishing', 'ended', 'error']);
export type IngressStatus = z.infer<typeof IngressStatus>;

export const CreateIngressBody = z
  .strictObject({
    streamId: StreamId,
    kind: IngressKind,
    /**
     * Re-encode into a simulcast ladder (default for RTMP). WHIP defaults to passing the
     * publisher's WebRTC tracks through untouched, which costs almost no CPU.
     */
    transcode: z.boolean().optional(),
  })
  .meta({ id: 'CreateIngressBody' });
export type CreateIngressBody = z.infer<typeof CreateIngressBody>;

/** What `transcode` means when the request leaves it out. */
export function defaultTranscode(kind: IngressKind): boolean {
  return kind === 'rtmp';
}

export const IngressView = z
  .object({
    id: IngressId,
    appId: AppId,
    streamId: StreamId,
    kind: IngressKind,
    transcode: z.boolean(),
    /** Where the encoder pushes: RTMP appends the stream key as the last path segment; WHIP sends it as a Bearer token. */
    url: z.string(),
    status: IngressStatus,
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
    deletedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Ingress' });
export type IngressView = z.infer<typeof IngressView>;

export const CreatedIngress = IngressView.extend({
  /** The stream key. Shown once, in this response; Tally keeps only its sha256. */
  streamKey: z.string(),
}).meta({ id: 'CreatedIngress' });
export type CreatedIngress = z.infer<typeof CreatedIngress>;

export const IngressList = z.object({ items: z.array(IngressView) }).meta({ id: 'IngressList' });
export type IngressList = z.infer<typeof IngressList>;

export const IngressListQuery = z.strictObject({ streamId: StreamId.optional(), status: IngressStatus.optional() });
export type IngressListQuery = z.infer<typeof IngressListQuery>;

export const IngressParams = z.object({ appId: AppId, ingressId: IngressId });
