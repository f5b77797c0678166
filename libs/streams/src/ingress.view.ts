import type { IngressView } from '@tally/contracts';
import type { Ingress } from '@tally/db';

/** The public shape of an ingress row: no stream key (only its hash is stored, and that is not shown either). */
export function toIngressView(ingress: Ingress): IngressView {
  return {
    id: ingress.id,
    appId: ingress.appId,
    streamId: ingress.streamId,
    kind: ingress.kind,
    transcode: ingress.transcode,
    url: ingress.url,
    status: ingress.status,
    error: ingress.error,
    createdAt: ingress.createdAt.toISOString(),
    deletedAt: ingress.deletedAt?.toISOString() ?? null,
  };
}
