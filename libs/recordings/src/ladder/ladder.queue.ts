import { JOBS, type LadderRun, transcodeQueueOf } from '@tally/contracts';
import { type ConnectionOptions, Queue } from 'bullmq';

/**
 * The adapter in front of the per-node ladder queues, which only that node's agent consumes. They
 * are a family opened per node at run time (libs/contracts/src/jobs.ts), so they are not registered
 * with @nestjs/bullmq; they use its shared connection options.
 */
export class LadderQueue {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly connection: ConnectionOptions) {}

  /** Queues the run on the node it was admitted on; the job id is `<recordingId>.<attempt>`, so a retry of the call queues it once. */
  async dispatch(nodeId: string, run: LadderRun): Promise<void> {
    await this.queue(transcodeQueueOf(nodeId)).add(JOBS.runLadder.name, JOBS.runLadder.payload.parse(run), {
      jobId: `${run.recordingId}.${run.attempt}`,
      // A failed run is not retried here: the report decides (a GPU failure goes to the CPU).
      attempts: 1,
      removeOnComplete: 1_000,
      removeOnFail: 5_000,
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

  /** Closed in the last shutdown phase, after in-flight requests and jobs that add to it (Nest calls this by name). */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
