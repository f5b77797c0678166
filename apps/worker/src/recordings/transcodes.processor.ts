import { type BeforeApplicationShutdown, Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, type JobPayload, QUEUES } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { LadderLifecycle } from '@tally/recordings';
import { HandlesJob, type JobConsumerHost, runJob } from '@tally/runtime';
import type { Job, Queue } from 'bullmq';
import { keepScheduled, upsertSchedule } from '../jobs/kept-schedule.js';

/** Sweeps stuck ladders (the agents' reports arrive on their nodes' report queues, NodeReportsProcessor). */
@Processor(QUEUES.transcodes, { concurrency: 4 })
export class TranscodesProcessor extends WorkerHost implements JobConsumerHost, OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly consumes = QUEUES.transcodes;
  private readonly logger = new Logger(TranscodesProcessor.name);
  private stopKeeping: (() => void) | undefined;

  constructor(
    private readonly ladders: LadderLifecycle,
    private readonly registry: NodeRegistry,
    @InjectQueue(QUEUES.transcodes) private readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    const schedule = { queue: this.queue, name: JOBS.sweepLadders.name, everyMs: this.config.sweepIntervalS * 1000 };
    await upsertSchedule(schedule);
    this.stopKeeping = keepScheduled(schedule, this.logger);
  }

  beforeApplicationShutdown(): void {
    this.stopKeeping?.();
  }

  process(job: Job): Promise<unknown> {
    return runJob(this, job);
  }

  @HandlesJob('sweepLadders')
  async sweepLadders(_payload: JobPayload<'sweepLadders'>): Promise<Readonly<{ laddersFailedOver: number }>> {
    const live = new Set((await this.registry.list()).map((n) => n.nodeId));
    return { laddersFailedOver: await this.ladders.sweep(live) };
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.error(`${job?.name ?? '?'} ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${error.message}`);
  }
}
