import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Config } from '@tally/config';
import { ladderDirOf } from './ladder/ladder-lifecycle.js';
import { RecordingObjects } from './recording-objects.js';

export type StoredRecording = Readonly<{ id: string; storage: string; location: string }>;

/**
 * The adapter in front of a recording's files, wherever they are: on local storage its file, its
 * ladder directory and any passthrough part left in `.incoming/`; on S3 its object (ladders are
 * always local). Removing what is already gone succeeds, so a retried delete finishes the job.
 */
export class RecordingFileStore {
  private readonly objects: RecordingObjects | undefined;

  constructor(private readonly recordings: Config['recordings']) {
    this.objects = recordings.s3 ? new RecordingObjects(recordings.s3) : undefined;
  }

  async remove(recording: StoredRecording): Promise<void> {
    const { dir } = this.recordings;
    if (recording.storage === 's3' && this.objects) await this.objects.remove(recording.location);
    else {
      await rm(join(dir, recording.location), { force: true });
      // An upload may have finished since this row was read: its object goes too, when the store answers
      // (an upload that finishes after the row is gone deletes its own object).
      await this.objects?.remove(recording.location).catch(() => undefined);
    }
    await rm(join(dir, ladderDirOf(recording.location)), { recursive: true, force: true });
    await this.removeParts(recording);
  }

  /** Passthrough parts (`<id>.video.h264`, `<id>.audio-1.ogg`, …) that were never joined. */
  private async removeParts(recording: StoredRecording): Promise<void> {
    const incoming = join(this.recordings.dir, '.incoming', dirname(recording.location));
    const names = await readdir(incoming).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith(`${recording.id}.`))) await rm(join(incoming, basename(name)), { force: true });
  }
}
