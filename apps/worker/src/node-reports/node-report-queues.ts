import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { nodeReportQueueOf, QUEUES } from '@tally/contracts';
import { bullConnection, RedisConnection } from '@tally/runtime';
import { type Job, Queue, Worker } from 'bullmq';

/** A running consumer of one node's report queue. */
export type NodeReportConsumer = Readonly<{ close(): Promise<void> }>;

const REPORT_QUEUE_EVENTS = new RegExp(`^bull:${QUEUES.nodeReport.replace(/[-.]/g, '\\$&')}\\.(.+):events$`);

/** The adapter in front of the nodes' report queues (BullMQ), one queue per node. */
@Injectable()
export class NodeReportQueues {
  constructor(
    private readonly redis: RedisConnection,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Starts consuming the node's queue; `handle` runs each job with the node taken from the queue's name. */
  consume(nodeId: string, handle: (nodeId: string, job: Job) => Promise<unknown>, onFailed: (job: Job | undefined, error: Error) => void) {
    const worker = new Worker(nodeReportQueueOf(nodeId), (job) => handle(nodeId, job), {
      connection: bullConnection(this.config),
      concurrency: 4,
    });
    worker.on('failed', onFailed);
    // Connection errors: BullMQ reconnects on its own; the failed handler reports jobs.
    worker.on('error', (error) => onFailed(undefined, error));
    return { close: () => worker.close() } satisfies NodeReportConsumer;
  }

  /** Jobs still to run on the node's queue (waiting, delayed, running). */
  async pending(nodeId: string): Promise<number> {
    const queue = new Queue(nodeReportQueueOf(nodeId), { connection: this.redis });
    try {
      return await queue.count();
    } finally {
      await queue.close();
    }
  }

  /**
   * Nodes with a report queue in Redis, whether or not they are in the pool (a node that left with
   * reports still queued). One SCAN, at boot only.
   */
  async queuedNodes(): Promise<string[]> {
    const nodes = new Set<string>();
    const stream = this.redis.scanStream({ match: `bull:${QUEUES.nodeReport}.*:events`, count: 1_000 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      for (const key of keys) {
        const node = REPORT_QUEUE_EVENTS.exec(key)?.[1];
        if (node !== undefined) nodes.add(node);
      }
    }
    return [...nodes];
  }
}
