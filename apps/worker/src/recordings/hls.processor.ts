import { Inject } from '@nestjs/common';
import { InjectQueue, Processor } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, ScheduledProcessor, type ScheduledJob } from '@tally/runtime';
import type { Queue } from 'bullmq';
import { HlsJanitor, type HlsSweepReport } from './hls-janitor.service.js';

/**
 * Runs the live HLS sweep every few seconds (half the retention, between 0.5 and 5 s), on a queue of
 * its own so a long reconciliation sweep never holds up a playlist going live or segments going away.
 */
@Processor(QUEUES.hls, { concurrency: 1 })
export class HlsProcessor extends ScheduledProcessor {
  readonly consumes = QUEUES.hls;
  protected override readonly clusterConcurrency = 1;

  constructor(
    private readonly janitor: HlsJanitor,
    @InjectQueue(QUEUES.hls) protected readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  protected schedules(): readonly ScheduledJob[] {
    return [{ job: 'sweepHls', everyMs: Math.max(500, Math.min(5_000, (this.config.hls.retentionS * 1000) / 2)) }];
  }

  @HandlesJob('sweepHls')
  sweepHls(_payload: JobPayload<'sweepHls'>): Promise<HlsSweepReport> {
    return this.janitor.sweep();
  }
}
