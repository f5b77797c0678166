import { Inject } from '@nestjs/common';
import { InjectQueue, Processor } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, type JobPayload, QUEUES } from '@tally/contracts';
import { HandlesJob, ScheduledProcessor, type ScheduledJob } from '@tally/runtime';
import type { Queue } from 'bullmq';
import { Clock } from '../clock.js';
import type { SweepReport } from './repair-counter.js';
import { RedisLossDetector } from '../reconcile/redis-loss.js';
import { EventPruner } from '../webhooks/event-pruner.service.js';
import { Sweep } from './sweep.service.js';

/** How often the worker checks whether Redis lost its data (one EXISTS). */
const LOSS_CHECK_MS = 2_000;

/** Runs the sweep and event retention on their schedules, and consumes the maintenance queue, one job at a time. */
@Processor(QUEUES.maintenance, { concurrency: 1 })
export class MaintenanceProcessor extends ScheduledProcessor {
  readonly consumes = QUEUES.maintenance;
  protected override readonly clusterConcurrency = 1;
  private stopWatching: (() => void) | undefined;

  constructor(
    private readonly sweep: Sweep,
    private readonly pruner: EventPruner,
    private readonly clock: Clock,
    private readonly redisLoss: RedisLossDetector,
    @InjectQueue(QUEUES.maintenance) protected readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  protected schedules(): readonly ScheduledJob[] {
    const everyMs = this.config.sweepIntervalS * 1000;
    return [
      { job: 'reconcileStreams', everyMs },
      { job: 'pruneEvents', everyMs },
    ];
  }

  override async onApplicationBootstrap(): Promise<void> {
    await super.onApplicationBootstrap();
    this.stopWatching = this.redisLoss.watch(LOSS_CHECK_MS, async (noticedAt) => {
      await this.queue.add(JOBS.reconcileStreams.name, {}, { jobId: `redis-loss-${noticedAt}`, removeOnComplete: 100, removeOnFail: 500 });
    });
  }

  override beforeApplicationShutdown(): void {
    super.beforeApplicationShutdown();
    this.stopWatching?.();
  }

  @HandlesJob('reconcileStreams')
  reconcileStreams(_payload: JobPayload<'reconcileStreams'>): Promise<SweepReport> {
    return this.sweep.run(this.clock.now());
  }

  @HandlesJob('pruneEvents')
  pruneEvents(_payload: JobPayload<'pruneEvents'>): Promise<Readonly<{ webhookEvents: number; livekitEvents: number }>> {
    return this.pruner.prune(this.clock.now());
  }
}
