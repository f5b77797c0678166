import { JOBS, QUEUES } from '@tally/contracts';
import { Queue } from 'bullmq';

/** The adapter in front of the worker's recordings queue. */
export class FinaliseQueue {
  private readonly queue: Queue;

  constructor(redisUrl: string) {
    this.queue = new Queue(QUEUES.recordings, { connection: { url: redisUrl, maxRetriesPerRequest: null } });
  }

  /** Queues the recording's finalisation; the job id is the recording id, so asking twice queues it once. */
  async enqueue(recordingId: string): Promise<void> {
    await this.queue.add(
      JOBS.finaliseRecording.name,
      { recordingId },
      { jobId: recordingId, attempts: 5, backoff: { type: 'exponential', delay: 5_000 }, removeOnComplete: 1_000, removeOnFail: 5_000 },
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }

  /** Closed in the last shutdown phase, after in-flight requests and jobs that add to it (Nest calls this by name). */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
