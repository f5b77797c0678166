import { Logger } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { JOBS, type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, type JobConsumerHost, runJob } from '@tally/runtime';
import type { Job } from 'bullmq';
import { RecordingFinaliser } from './recording-finaliser.service.js';
import { RecordingUploader } from './recording-uploader.service.js';

/** Consumes the recordings queue, two jobs at a time: a finalisation reads the whole file once (probe, checksum), an upload sends it. */
@Processor(QUEUES.recordings, { concurrency: 2 })
export class RecordingsProcessor extends WorkerHost implements JobConsumerHost {
  readonly consumes = QUEUES.recordings;
  private readonly logger = new Logger(RecordingsProcessor.name);

  constructor(
    private readonly finaliser: RecordingFinaliser,
    private readonly uploader: RecordingUploader,
  ) {
    super();
  }

  process(job: Job): Promise<unknown> {
    return runJob(this, job);
  }

  @HandlesJob('finaliseRecording')
  finaliseRecording({ recordingId, staged }: JobPayload<'finaliseRecording'>): Promise<unknown> {
    return this.finaliser.finalise(recordingId, staged === true);
  }

  @HandlesJob('uploadRecording')
  uploadRecording({ recordingId }: JobPayload<'uploadRecording'>): Promise<unknown> {
    return this.uploader.upload(recordingId);
  }

  /** A finalisation that keeps failing fails its recording, so nothing stays "ending". */
  @OnWorkerEvent('failed')
  async onFailed(job: Job | undefined, error: Error): Promise<void> {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? 1);
    this.logger.error(`${job.name} ${job.id ?? '?'} failed (attempt ${job.attemptsMade}${last ? ', giving up' : ''}): ${error.message}`);
    if (!last || job.name !== JOBS.finaliseRecording.name) return;
    const { recordingId } = JOBS.finaliseRecording.payload.parse(job.data);
    await this.finaliser.fail(recordingId, `finalising failed: ${error.message}`).catch((e: unknown) => {
      this.logger.error(`could not mark ${recordingId} failed: ${String(e)}`);
    });
  }
}
