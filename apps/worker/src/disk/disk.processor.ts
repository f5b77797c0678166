import { type BeforeApplicationShutdown, Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, type JobConsumerHost, runJob } from '@tally/runtime';
import type { Job, Queue } from 'bullmq';
import { Clock } from '../clock.js';
import { keepScheduled, upsertSchedule } from '../jobs/kept-schedule.js';
import { type DiskCheckReport, DiskWatermarkCheck } from './disk-watermark.service.js';

/**
 * Schedules the disk watermark check and runs it, one at a time, on a queue of its own: a sweep or
 * a join that takes a minute must not hold up a check that has seconds (docs/adr/0022-disk-watermarks.md).
 */
@Processor(QUEUES.disk, { concurrency: 1 })
export class DiskProcessor extends WorkerHost implements JobConsumerHost, OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly consumes = QUEUES.disk;
  private readonly logger = new Logger(DiskProcessor.name);
  private stopKeeping: (() => void) | undefined;

  constructor(
    private readonly check: DiskWatermarkCheck,
    private readonly clock: Clock,
    @InjectQueue(QUEUES.disk) private readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    const schedule = { queue: this.queue, name: JOBS.checkDiskWatermarks.name, everyMs: this.config.disk.checkIntervalMs };
    await upsertSchedule(schedule);
    this.stopKeeping = keepScheduled(schedule, this.logger);
  }

  beforeApplicationShutdown(): void {
    this.stopKeeping?.();
  }

  process(job: Job): Promise<unknown> {
    return runJob(this, job);
  }

  @HandlesJob('checkDiskWatermarks')
  checkDiskWatermarks(_payload: JobPayload<'checkDiskWatermarks'>): Promise<DiskCheckReport> {
    return this.check.run(this.clock.now());
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.error(`job ${job?.name ?? '?'} failed: ${error.message}`);
  }
}
