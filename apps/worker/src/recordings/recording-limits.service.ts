import { Inject, Injectable, Logger } from '@nestjs/common';
import { pastMaxDuration, retentionCutoff, storageSettings } from '@tally/capacity';
import { CONFIG, type Config } from '@tally/config';
import type { Recording } from '@tally/db';
import { RecordingLifecycle, RecordingRemoval, RecordingStopper } from '@tally/recordings';
import { RecordingLimitsRepository } from './recording-limits.repository.js';

export type RecordingLimitsReport = Readonly<{ recordingsDeleted: number; recordingsStopped: number }>;

/**
 * Each sweep: stops recordings that ran their app's maxRecordingDurationS (they end complete with
 * endReason max_duration, so a stop is at most one sweep interval late), and deletes recordings
 * that ended longer ago than the app's recordingRetentionDays (files, row, `recording.deleted`).
 */
@Injectable()
export class RecordingLimits {
  private readonly logger = new Logger(RecordingLimits.name);

  constructor(
    private readonly repository: RecordingLimitsRepository,
    private readonly lifecycle: RecordingLifecycle,
    private readonly removal: RecordingRemoval,
    private readonly stopper: RecordingStopper,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async run(now: Date): Promise<RecordingLimitsReport> {
    let recordingsDeleted = 0;
    let recordingsStopped = 0;
    for (const app of await this.repository.apps()) {
      const settings = storageSettings({ ...app, maxStorageMb: undefined }, this.config.appDefaults);
      if (settings.maxRecordingDurationS !== undefined) {
        for (const recording of await this.repository.recording(app.id)) {
          if (!recording.startedAt || !pastMaxDuration(recording.startedAt, now, settings.maxRecordingDurationS)) continue;
          await this.stop(recording, now);
          recordingsStopped += 1;
        }
      }
      const cutoff = retentionCutoff(now, settings.recordingRetentionDays);
      if (cutoff === undefined) continue;
      for (const recording of await this.repository.endedBefore(app.id, cutoff)) {
        if (await this.removal.remove(recording)) recordingsDeleted += 1;
      }
    }
    const report = { recordingsDeleted, recordingsStopped };
    if (recordingsDeleted + recordingsStopped > 0) this.logger.log(`recording limits applied ${JSON.stringify(report)}`);
    return report;
  }

  /** As a stop through the API: the egress finishes its file and the recording completes, keeping the reason. */
  private async stop(recording: Recording, now: Date): Promise<void> {
    await this.lifecycle.noteEndReason(recording.id, 'max_duration');
    await this.stopper.stop(recording, now);
  }
}
