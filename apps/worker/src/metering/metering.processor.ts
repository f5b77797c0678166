import { type BeforeApplicationShutdown, Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, type JobConsumerHost, runJob } from '@tally/runtime';
import type { Job, Queue } from 'bullmq';
import { Clock } from '../clock.js';
import { keepScheduled, upsertSchedule } from '../jobs/kept-schedule.js';
import { MeteringSweep, type MeteringSweepReport } from './metering-sweep.service.js';

/** Schedules the metering sweep every TALLY_METERING_SYNC_INTERVAL_S and runs it, one at a time, on its own queue. */
@Processor(QUEUES.metering, { concurrency: 1 })
export class MeteringProcessor extends WorkerHost implements JobConsumerHost, OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly consumes = QUEUES.metering;
  private readonly logger = new Logger(MeteringProcessor.name);
  private stopKeeping: (() => void) | undefined;

  constructor(
    private readonly sweep: MeteringSweep,
    private readonly clock: Clock,
    @InjectQueue(QUEUES.metering) private readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    const schedule = { queue: this.queue, name: JOBS.sweepUsage.name, everyMs: this.config.metering.syncIntervalS * 1000 };
    await upsertSchedule(schedule);
    this.stopKeeping = keepScheduled(schedule, this.logger);
  }

  beforeApplicationShutdown(): void {
    this.stopKeeping?.();
  }

  process(job: Job): Promise<unknown> {
    return runJob(this, job);
  }

  @HandlesJob('sweepUsage')
  sweepUsage(_payload: JobPayload<'sweepUsage'>): Promise<MeteringSweepReport> {
    return this.sweep.run(this.clock.now());
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.error(`job ${job?.name ?? '?'} failed: ${error.message}`);
  }
}
