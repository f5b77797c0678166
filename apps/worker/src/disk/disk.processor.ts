import { Inject } from '@nestjs/common';
import { InjectQueue, Processor } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, ScheduledProcessor, type ScheduledJob } from '@tally/runtime';
import type { Queue } from 'bullmq';
import { Clock } from '../clock.js';
import { type DiskCheckReport, DiskWatermarkCheck } from './disk-watermark.service.js';

/**
 * A check takes milliseconds, and the queue runs one at a time in the whole cluster: the check a
 * killed worker held blocks every other until its lock lapses and a live worker finds it stalled.
 * BullMQ's 30 s lock and 30 s stall scan would leave the disk unwatched for up to a minute; these
 * leave it for up to 10 s. A check run twice is harmless.
 */
const CHECK_LOCK_MS = 5_000;

/**
 * Runs the disk watermark check, one at a time, on a queue of its own: a sweep or a join that takes
 * a minute must not hold up a check that has seconds (docs/adr/0022-disk-watermarks.md).
 */
@Processor(QUEUES.disk, { concurrency: 1, lockDuration: CHECK_LOCK_MS, stalledInterval: CHECK_LOCK_MS })
export class DiskProcessor extends ScheduledProcessor {
  readonly consumes = QUEUES.disk;
  protected override readonly clusterConcurrency = 1;

  constructor(
    private readonly check: DiskWatermarkCheck,
    private readonly clock: Clock,
    @InjectQueue(QUEUES.disk) protected readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  protected schedules(): readonly ScheduledJob[] {
    return [{ job: 'checkDiskWatermarks', everyMs: this.config.disk.checkIntervalMs }];
  }

  @HandlesJob('checkDiskWatermarks')
  checkDiskWatermarks(_payload: JobPayload<'checkDiskWatermarks'>): Promise<DiskCheckReport> {
    return this.check.run(this.clock.now());
  }
}
