import { type RedisTarget, redisConnectionOptions } from '@tally/config';
import { JOBS, type LadderReport, nodeReportQueueOf } from '@tally/contracts';
import { Queue } from 'bullmq';

/** The adapter in front of the node's report queue, where its agent reports its ladders to the worker. */
export class LadderReports {
  private readonly queue: Queue;

  constructor(redis: RedisTarget, nodeId: string) {
    this.queue = new Queue(nodeReportQueueOf(nodeId), { connection: redisConnectionOptions(redis, { maxRetriesPerRequest: null }) });
  }

  /** One job per attempt and outcome, so a repeated report is applied once. */
  async send(report: LadderReport): Promise<void> {
    await this.queue.add(JOBS.reportLadder.name, report, {
      jobId: `${report.recordingId}.${report.attempt}.${report.outcome}`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 2_000 },
      removeOnComplete: 1_000,
      removeOnFail: 5_000,
    });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
