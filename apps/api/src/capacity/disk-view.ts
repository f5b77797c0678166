import type { DiskState } from '@tally/capacity';
import type { NodeDiskView } from '@tally/contracts';

/** A filesystem as the capacity model sees it, in the API's shape. */
export function toDiskView(d: DiskState): NodeDiskView {
  return {
    key: d.key,
    mount: d.mount ?? '',
    roles: [...d.roles],
    dirs: [...(d.dirs ?? [])],
    totalBytes: d.totalBytes,
    freeBytes: d.freeBytes,
    stopFreeBytes: d.stopFreeBytes,
    alertFreeBytes: d.alertFreeBytes,
    admissibleMb: d.admissibleMb,
    reservedMb: d.reservedMb,
    freeMb: d.freeMb,
  };
}
