import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { JOBS, QUEUES } from '@tally/contracts';
import type { Queue } from 'bullmq';

/** The adapter in front of the worker's recordings queue (registered with @nestjs/bullmq, which closes it last on shutdown). */
@Injectable()
export class FinaliseQueue {
  constructor(@InjectQueue(QUEUES.recordings) private readonly queue: Queue) {}

  /** Queues the recording's finalisation; the job id is the recording id, so asking twice queues it once. */
  async enqueue(recordingId: string): Promise<void> {
    await this.queue.add(JOBS.finaliseRecording.name, JOBS.finaliseRecording.payload.parse({ recordingId }), {
      jobId: recordingId,
      attempts: 5,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: 1_000,
      removeOnFail: 5_000,
    });
  }

  /**
   * Queues the recording's finalisation once a node staged its files in the bucket: a job of its own
   * (`<recordingId>.staged`, gone once run), since the first finalisation, which asked for them, is done.
   */
  async enqueueAfterStaging(recordingId: string): Promise<void> {
    await this.queue.add(JOBS.finaliseRecording.name, JOBS.finaliseRecording.payload.parse({ recordingId, staged: true }), {
      jobId: `${recordingId}.staged`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  /**
   * Queues the recording's upload to object storage: five attempts 2, 4, 8 and 16 s apart; once they
   * are spent the job is gone, so the sweep that finds the recording still local queues it again.
   */
  async enqueueUpload(recordingId: string): Promise<void> {
    await this.queue.add(JOBS.uploadRecording.name, JOBS.uploadRecording.payload.parse({ recordingId }), {
      jobId: `${recordingId}.upload`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 2_000 },
      removeOnComplete: true,
      removeOnFail: true,
    });
  }
}
