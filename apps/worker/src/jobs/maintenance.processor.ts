import { type BeforeApplicationShutdown, Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, type JobConsumerHost, runJob } from '@tally/runtime';
import type { Job, Queue } from 'bullmq';
import { Clock } from '../clock.js';
import type { SweepReport } from './repair-counter.js';
import { RedisLossDetector } from '../reconcile/redis-loss.js';
import { keepScheduled, upsertSchedule } from './kept-schedule.js';
import { Sweep } from './sweep.service.js';

/** How often the worker checks whether Redis lost its data (one EXISTS). */
const LOSS_CHECK_MS = 2_000;

/** Schedules the sweep and consumes the maintenance queue, one job at a time. */
@Processor(QUEUES.maintenance, { concurrency: 1 })
export class MaintenanceProcessor extends WorkerHost implements JobConsumerHost, OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly consumes = QUEUES.maintenance;
  private readonly logger = new Logger(MaintenanceProcessor.name);
  private stopKeeping: (() => void) | undefined;
  private stopWatching: (() => void) | undefined;

  constructor(
    private readonly sweep: Sweep,
    private readonly clock: Clock,
    private readonly redisLoss: RedisLossDetector,
    @InjectQueue(QUEUES.maintenance) private readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    const schedule = { queue: this.queue, name: JOBS.reconcileStreams.name, everyMs: this.config.sweepIntervalS * 1000 };
    await upsertSchedule(schedule);
    this.stopKeeping = keepScheduled(schedule, this.logger);
    this.stopWatching = this.redisLoss.watch(LOSS_CHECK_MS, async (noticedAt) => {
      await this.queue.add(JOBS.reconcileStreams.name, {}, { jobId: `redis-loss-${noticedAt}`, removeOnComplete: 100, removeOnFail: 500 });
    });
  }

  beforeApplicationShutdown(): void {
    this.stopKeeping?.();
    this.stopWatching?.();
  }

  process(job: Job): Promise<unknown> {
    return runJob(this, job);
  }

  @HandlesJob('reconcileStreams')
  reconcileStreams(_payload: JobPayload<'reconcileStreams'>): Promise<SweepReport> {
    return this.sweep.run(this.clock.now());
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.error(`job ${job?.name ?? '?'} failed: ${error.message}`);
  }
}
