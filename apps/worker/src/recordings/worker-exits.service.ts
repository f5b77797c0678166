import { Injectable, Logger } from '@nestjs/common';
import type { WorkerExitReport } from '@tally/contracts';
import { RecordingLifecycle } from '@tally/recordings';
import { type OpenOnNode, RecordingRowsRepository } from './recording-rows.repository.js';

const WRITING = new Set(['starting', 'active', 'ending']);

/**
 * A node's egress worker ended on its own (crash, OOM kill): every recording it was writing ends
 * there. A passthrough recording's Track egresses run inside the egress process (docs/adr/0048):
 * each is judged failed with the worker's reason, as LiveKit reports a killed egress, so the
 * recording keeps what both files hold until then (docs/recordings.md, "An egress dies while
 * recording"); every other open recording placed on that node before the exit fails, which
 * releases its reservation and sends `recording.failed`. Recordings started after the exit run on
 * the restarted worker and are left alone. Ingress sessions need nothing here: LiveKit ends them,
 * and the ingresses themselves stay usable once the worker is back.
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
    const reason = `egress worker on ${report.nodeId}: ${report.reason}`;
    const lost = await this.rows.openOnNode(report.nodeId, at);
    let failed = 0;
    let cut = 0;
    for (const recording of lost) {
      if (await this.cutParts(recording, reason, at)) cut++;
      else if (await this.lifecycle.fail(recording.id, reason, at)) failed++;
    }
    if (failed + cut > 0)
      this.logger.warn(
        `${report.kind} worker ${report.workerId} on ${report.nodeId} ended (${report.reason}): ${failed} recording(s) failed, ${cut} passthrough recording(s) cut`,
      );
    return { recordingsFailed: failed };
  }

  /** A passthrough recording's writing egresses, failed as LiveKit reports a killed one; false when it has none. */
  private async cutParts(recording: OpenOnNode, reason: string, at: Date): Promise<boolean> {
    const writing = recording.egresses.flatMap((e) => (e.egressId !== null && WRITING.has(e.state) ? [e.egressId] : []));
    if (recording.mode !== 'passthrough' || writing.length === 0) return false;
    for (const egressId of writing)
      await this.lifecycle.applyEgress(
        {
          egressId,
          room: '',
          requestedPath: undefined,
          state: 'failed',
          error: reason,
          startedAt: undefined,
          endedAt: at,
          file: undefined,
        },
        at,
      );
    return true;
  }
}
