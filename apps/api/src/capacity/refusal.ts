import type { Refusal } from '@tally/capacity';
import { LimitRefusedError } from '../common/domain-error.js';

/** Capacity frees up as workloads end; a client retrying sooner than this only adds load. */
export const CAPACITY_RETRY_AFTER_S = 30;

export function refusalError(refusal: Refusal): LimitRefusedError {
  const { code, resource, limit, used, requested } = refusal;
  if (code === 'quota_exceeded') return new LimitRefusedError(code, { resource, limit, used, requested });
  return new LimitRefusedError(code, {
    resource,
    limit,
    used,
    requested,
    retryAfterS: CAPACITY_RETRY_AFTER_S,
    ...('nodeId' in refusal && refusal.nodeId !== undefined ? { nodeId: refusal.nodeId } : {}),
    ...('heldResource' in refusal ? { heldResource: refusal.heldResource } : {}),
  });
}
