import { JOBS, recordingNodeQueueOf, type StageRecording } from '@tally/contracts';
import { type ConnectionOptions, Queue } from 'bullmq';

/** The agent's retries while the store is away: its custom backoff (2 s doubling, at most 5 min), for about three days. */
const STAGE_ATTEMPTS = 1_000;

/**
 * The adapter in front of the per-node staging queues, which only that node's agent consumes (a
 * family opened per node at run time, like the ladder queues).
 */
export class StagingQueue {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly connection: ConnectionOptions) {}

  /** Asks the node for the recording's files; the job id is the recording id, so asking again while it runs asks once. */
  async request(nodeId: string, request: StageRecording): Promise<void> {
    await this.queue(recordingNodeQueueOf(nodeId)).add(JOBS.stageRecording.name, JOBS.stageRecording.payload.parse(request), {
      jobId: request.recordingId,
      attempts: STAGE_ATTEMPTS,
      backoff: { type: 'stage' },
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  private queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection });
      this.queues.set(name, queue);
    }
    return queue;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }

  /** Closed in the last shutdown phase (Nest calls this by name). */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
