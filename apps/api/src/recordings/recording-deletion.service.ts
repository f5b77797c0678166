import { Injectable } from '@nestjs/common';
import { DELETABLE, RecordingRemoval } from '@tally/recordings';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { RecordingsRepository } from './recordings.repository.js';

/** DELETE /v1/apps/{appId}/recordings/{id}: a finished recording's files and row; a running one must be stopped first. */
@Injectable()
export class RecordingDeletion {
  constructor(
    private readonly recordings: RecordingsRepository,
    private readonly removal: RecordingRemoval,
  ) {}

  async delete(appId: string, recordingId: string): Promise<void> {
    const recording = await this.recordings.find(appId, recordingId);
    if (!recording) throw new NotFoundError('recording');
    if (!DELETABLE.includes(recording.status)) {
      throw new DomainError('conflict', `the recording is ${recording.status}: stop it (POST …/stop) and delete it once it is complete`, {
        recordingStatus: recording.status,
      });
    }
    // A concurrent delete (or the retention sweep) that got there first leaves nothing: the same 404 as a second delete.
    if (!(await this.removal.remove(recording))) throw new NotFoundError('recording');
  }
}
