import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { type JobPayload, QUEUES } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { LadderLifecycle } from '@tally/recordings';
import { HandlesJob, type JobConsumerHost, runJob } from '@tally/runtime';
import { UnrecoverableError } from 'bullmq';
import { NodeStaging } from '../recordings/node-staging.service.js';
import { WorkerExits } from '../recordings/worker-exits.service.js';
import { type NodeReportConsumer, NodeReportQueues } from './node-report-queues.js';

/** How often the set of consumed report queues follows the pool (a new node's reports wait at most this long). */
const FOLLOW_POOL_MS = 2_000;

/**
 * Consumes every node's report queue (`tally-node-report.<node>`): ladder reports, media-worker
 * exits and staged recordings. A node's Redis user can write only its own queue, so the queue's name says which node
 * reports; a report naming any other node is refused and changes nothing. One consumer runs per
 * node in the pool, and per node that left with reports still queued until they are done.
 */
@Injectable()
export class NodeReportsProcessor implements JobConsumerHost, OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly consumes = QUEUES.nodeReport;
  private readonly logger = new Logger(NodeReportsProcessor.name);
  private readonly consumers = new Map<string, NodeReportConsumer>();
  private timer: NodeJS.Timeout | undefined;
  private following: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly queues: NodeReportQueues,
    private readonly registry: NodeRegistry,
    private readonly ladders: LadderLifecycle,
    private readonly workerExits: WorkerExits,
    private readonly staging: NodeStaging,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const nodeId of await this.queues.queuedNodes()) this.start(nodeId);
    await this.followPool();
    // Follows the pool on a timer, not as a BullMQ job: it starts and stops this process's own consumers.
    this.timer = setInterval(() => {
      this.following = this.following
        .then(() => this.followPool())
        .catch((e: unknown) => this.logger.warn(`following the pool: ${String(e)}`));
    }, FOLLOW_POOL_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.following;
    await Promise.all([...this.consumers.values()].map((c) => c.close()));
    this.consumers.clear();
  }

  @HandlesJob('reportLadder')
  reportLadder(report: JobPayload<'reportLadder'>): Promise<unknown> {
    return this.ladders.apply(report);
  }

  @HandlesJob('workerExited')
  workerExited(report: JobPayload<'workerExited'>): Promise<unknown> {
    return this.workerExits.handle(report);
  }

  @HandlesJob('reportStaged')
  reportStaged(report: JobPayload<'reportStaged'>): Promise<unknown> {
    return this.staging.applyReport(report);
  }

  /** Runs a job of `nodeId`'s queue, refusing (without retries) a report about another node. */
  run(nodeId: string, job: Readonly<{ name: string; data: unknown }>): Promise<unknown> {
    const named = (job.data as { nodeId?: unknown } | null)?.nodeId;
    if (named !== nodeId) throw new UnrecoverableError(`a report on node ${nodeId}'s queue names node ${String(named)}`);
    return runJob(this, job);
  }

  private start(nodeId: string): void {
    if (this.stopped || this.consumers.has(nodeId)) return;
    const consumer = this.queues.consume(
      nodeId,
      (node, job) => this.run(node, job),
      (job, error) => this.logger.error(`${job?.name ?? '?'} ${job?.id ?? '?'} from node ${nodeId} failed: ${error.message}`),
    );
    this.consumers.set(nodeId, consumer);
  }

  /** Starts a consumer per node in the pool; stops those of nodes gone from it once their queue is empty. */
  private async followPool(): Promise<void> {
    const live = new Set((await this.registry.list()).map((n) => n.nodeId));
    for (const nodeId of live) this.start(nodeId);
    for (const [nodeId, consumer] of this.consumers) {
      if (live.has(nodeId) || (await this.queues.pending(nodeId)) > 0) continue;
      this.consumers.delete(nodeId);
      await consumer.close();
    }
  }
}
