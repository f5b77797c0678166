import type { PrismaClient, Recording, RecordingStatus } from '@tally/db';
import type { WebhookOutbox } from '@tally/webhooks';
import type { RecordingFileStore } from './recording-file-store.js';
import { toRecordingView } from './recording.view.js';

/** Only a recording that no longer writes may be deleted: the others are stopped first. */
export const DELETABLE: readonly RecordingStatus[] = ['complete', 'failed'];

/**
 * Deletes a finished recording, for DELETE /v1/apps/{appId}/recordings/{id} and the retention sweep
 * alike: its files first, then its row with the app's `recording.deleted` event in one transaction.
 * Files before the row: a crash in between leaves a row whose delete is simply retried, never a file
 * nothing points at any more (which would hold disk that no quota counts).
 */
export class RecordingRemoval {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly outbox: WebhookOutbox,
    private readonly files: RecordingFileStore,
  ) {}

  /** False when the recording was already gone (a concurrent delete won) or is not finished. */
  async remove(recording: Recording): Promise<boolean> {
    if (!DELETABLE.includes(recording.status)) return false;
    await this.files.remove(recording);
    const staged = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.recording.deleteMany({
        where: { id: recording.id, appId: recording.appId, status: { in: [...DELETABLE] } },
      });
      if (count === 0) return { removed: false, staged: undefined };
      return { removed: true, staged: await this.outbox.stage(tx, recording.appId, 'recording.deleted', toRecordingView(recording)) };
    });
    await this.outbox.flush([staged.staged]);
    return staged.removed;
  }
}
