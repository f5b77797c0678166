import { Injectable, Logger } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { CameraLifecycle } from '@tally/streams';
import { ReconcileRepository } from './reconcile.repository.js';

/** The API deletes the row, then releases; a delete younger than this may still be releasing. */
const SETTLE_MS = 10_000;

export type CamerasReconcileReport = Readonly<{
  reservationsFreed: number;
  reservationsRestored: number;
}>;

/**
 * A camera's reservation lives as long as its row: the API takes it before writing the row and
 * releases it after marking the row deleted, so a process that dies in between leaves one without
 * the other. Confirmed `camera.mjpeg` reservations of deleted or missing cameras are released;
 * cameras that have none get theirs back on their node, at their own fps × frame-size cost.
 */
@Injectable()
export class CamerasReconciler {
  private readonly logger = new Logger(CamerasReconciler.name);

  constructor(
    private readonly repository: ReconcileRepository,
    private readonly ledger: CapacityLedger,
    private readonly lifecycle: CameraLifecycle,
  ) {}

  /**
   * Reservations are listed before the rows: a reservation confirmed by then had its row written
   * first, so the row read after it is seen. Pending reservations are a create in progress (or one
   * that died, and lapses): they are never released here, and a camera holding one is not restored.
   * A camera deleted while this sweep restores it keeps a confirmed reservation until the next sweep.
   */
  async run(now: Date): Promise<CamerasReconcileReport> {
    const held = (await this.ledger.list()).filter((r) => r.kind === 'camera.mjpeg');
    const heldIds = new Set(held.map((r) => r.id));
    const rows = new Map((await this.repository.camerasLiveOr([...heldIds])).map((c) => [c.id, c]));

    let freed = 0;
    for (const r of held) {
      if (!r.confirmed) continue;
      const row = rows.get(r.id);
      const gone = !row || (row.deletedAt !== null && now.getTime() - row.deletedAt.getTime() > SETTLE_MS);
      if (gone && (await this.ledger.release(r.id))) freed += 1;
    }

    let restored = 0;
    for (const camera of rows.values()) {
      if (camera.deletedAt !== null || heldIds.has(camera.id)) continue;
      if (await this.lifecycle.restore(camera)) restored += 1;
    }

    const report = { reservationsFreed: freed, reservationsRestored: restored };
    if (freed + restored > 0) this.logger.log(`repaired ${JSON.stringify(report)}`);
    return report;
  }
}
