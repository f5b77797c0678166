import { Injectable, Logger } from '@nestjs/common';
import type { WorkerExitReport } from '@tally/contracts';
import { RecordingLifecycle } from '@tally/recordings';
import { RecordingRowsRepository } from './recording-rows.repository.js';

/**
 * A node's egress worker ended on its own (crash, OOM kill): every recording it was writing is
 * lost. Each open recording placed on that node before the exit fails with the worker's reason,
 * which releases its reservation and sends `recording.failed`. Recordings started after the exit
 * run on the restarted worker and are left alone. Ingress sessions need nothing here: LiveKit ends
 * them, and the ingresses themselves stay usable once the worker is back.
 */
@Injectable()
export class WorkerExits {
  private readonly logger = new Logger(WorkerExits.name);

  constructor(
    private readonly rows: RecordingRowsRepository,
    private readonly lifecycle: RecordingLifecycle,
  ) {}

  async handle(report: WorkerExitReport): Promise<{ recordingsFailed: number }> {
    if (report.kind !== 'egress') return { recordingsFailed: 0 };
    const at = new Date(report.at);
    const lost = await this.rows.openOnNode(report.nodeId, at);
    let failed = 0;
    for (const { id } of lost) {
      if (await this.lifecycle.fail(id, `egress worker on ${report.nodeId}: ${report.reason}`, at)) failed++;
    }
    if (failed > 0)
      this.logger.warn(
        `${report.kind} worker ${report.workerId} on ${report.nodeId} ended (${report.reason}): ${failed} recording(s) failed`,
      );
    return { recordingsFailed: failed };
  }
}
