import { rm, stat } from 'node:fs/promises';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { FinaliseQueue, RecordingFiles, RecordingObjects } from '@tally/recordings';
import { RecordingRowsRepository } from './recording-rows.repository.js';

export type UploadOutcome = 'uploaded' | 'skipped' | 'waiting';

/** A ladder reads the local file: the recording goes up once its ladder is done. */
const LADDER_BUSY = ['queued', 'running'];
/** How many still-local recordings one sweep queues again. */
const SWEEP_BATCH = 200;

/**
 * With object storage on, moves each complete recording into the bucket: upload, read the object's
 * size back, only then point the row at the object and delete the local file. Until then the
 * recording is complete and served from local storage; a failed attempt leaves its reason in
 * `uploadError`, and the job's retries and the sweep try again until the store takes it.
 */
@Injectable()
export class RecordingUploader implements OnModuleDestroy {
  private readonly logger = new Logger(RecordingUploader.name);
  private readonly files: RecordingFiles;
  private readonly objects: RecordingObjects | undefined;

  constructor(
    private readonly rows: RecordingRowsRepository,
    private readonly queue: FinaliseQueue,
    @Inject(CONFIG) config: Config,
  ) {
    this.files = new RecordingFiles(config.recordings.dir);
    this.objects = config.recordings.s3 ? new RecordingObjects(config.recordings.s3) : undefined;
  }

  get enabled(): boolean {
    return this.objects !== undefined;
  }

  /** Queues the upload of a recording that just completed (nothing without object storage). */
  async request(recordingId: string): Promise<void> {
    if (this.objects) await this.queue.enqueueUpload(recordingId);
  }

  async upload(recordingId: string): Promise<UploadOutcome> {
    const objects = this.objects;
    const recording = await this.rows.get(recordingId);
    if (!objects || !recording || recording.status !== 'complete' || recording.storage !== 'local') return 'skipped';
    if (recording.ladderStatus !== null && LADDER_BUSY.includes(recording.ladderStatus)) return 'waiting';
    const path = this.files.finalPath(recording.location);
    const sizeBytes = await stat(path).then(
      (s) => s.size,
      () => undefined,
    );
    if (sizeBytes === undefined) return 'skipped';

    try {
      await objects.put(recording.location, path, sizeBytes);
      const stored = await objects.sizeOf(recording.location);
      if (stored !== sizeBytes) throw new Error(`the stored object holds ${stored ?? 'no'} bytes, the file ${sizeBytes}`);
    } catch (error) {
      const reason = `upload to object storage failed: ${describe(error)}`;
      await this.rows.recordUploadError(recordingId, reason);
      throw new Error(reason, { cause: error });
    }

    if (!(await this.rows.markUploaded(recordingId))) {
      // Deleted while it went up: the object must not outlive its row.
      await objects.remove(recording.location);
      return 'skipped';
    }
    await rm(path, { force: true });
    this.logger.log(`recording ${recordingId} uploaded: ${sizeBytes} bytes at ${recording.location}`);
    return 'uploaded';
  }

  /** Each sweep: every complete recording still on local storage is queued again (a queued one stays queued once). */
  async requeue(): Promise<number> {
    if (!this.objects) return 0;
    const pending = await this.rows.localComplete(SWEEP_BATCH);
    for (const { id } of pending) await this.queue.enqueueUpload(id);
    return pending.length;
  }

  onModuleDestroy(): void {
    this.objects?.close();
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const code = (error as { code?: string }).code;
  return [error.name !== 'Error' ? error.name : undefined, code, status === undefined ? undefined : `HTTP ${status}`, error.message]
    .filter((part) => part !== undefined && part !== '')
    .join(': ');
}
