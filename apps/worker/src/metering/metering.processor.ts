import { Inject } from '@nestjs/common';
import { InjectQueue, Processor } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, ScheduledProcessor, type ScheduledJob } from '@tally/runtime';
import type { Queue } from 'bullmq';
import { Clock } from '../clock.js';
import { MeteringSweep, type MeteringSweepReport } from './metering-sweep.service.js';

/** Runs the metering sweep every TALLY_METERING_SYNC_INTERVAL_S, one at a time, on its own queue. */
@Processor(QUEUES.metering, { concurrency: 1 })
export class MeteringProcessor extends ScheduledProcessor {
  readonly consumes = QUEUES.metering;
  protected override readonly clusterConcurrency = 1;

  constructor(
    private readonly sweep: MeteringSweep,
    private readonly clock: Clock,
    @InjectQueue(QUEUES.metering) protected readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  protected schedules(): readonly ScheduledJob[] {
    return [{ job: 'sweepUsage', everyMs: this.config.metering.syncIntervalS * 1000 }];
  }

  @HandlesJob('sweepUsage')
  sweepUsage(_payload: JobPayload<'sweepUsage'>): Promise<MeteringSweepReport> {
    return this.sweep.run(this.clock.now());
  }
}
