import { Injectable } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import type { WorkloadKind } from '@tally/capacity';
import { ladderReservationId } from '@tally/recordings';
import { RecordingRowsRepository } from './recording-rows.repository.js';

const KIND_OF: Readonly<Record<string, WorkloadKind>> = { nvenc: 'transcode.nvenc', x264: 'transcode.cpu' };

/**
 * A running ladder whose reservation is gone (Redis restarted without its data) gets it back on the
 * node that runs it. Queued ladders are not restored: one that lost its reservation lost its job too,
 * and the ladder sweep dispatches it again.
 */
@Injectable()
export class LadderRestorer {
  constructor(
    private readonly rows: RecordingRowsRepository,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
  ) {}

  async run(): Promise<Readonly<{ reservationsRestored: number }>> {
    const running = await this.rows.runningLadders();
    let restored = 0;
    for (const r of running) {
      const kind = KIND_OF[r.ladderEncoder ?? ''];
      if (!kind || !r.ladderNodeId || (await this.ledger.held(ladderReservationId(r.id)))) continue;
      if (await this.admitter.restore(ladderReservationId(r.id), r.appId, kind, 1, { nodeId: r.ladderNodeId })) restored += 1;
    }
    return { reservationsRestored: restored };
  }
}
