import { Inject } from '@nestjs/common';
import { InjectQueue, Processor } from '@nestjs/bullmq';
import { CONFIG, type Config } from '@tally/config';
import { type JobPayload, QUEUES } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { LadderLifecycle } from '@tally/recordings';
import { HandlesJob, ScheduledProcessor, type ScheduledJob } from '@tally/runtime';
import type { Queue } from 'bullmq';

/** Sweeps stuck ladders (the agents' reports arrive on their nodes' report queues, NodeReportsProcessor). */
@Processor(QUEUES.transcodes, { concurrency: 4 })
export class TranscodesProcessor extends ScheduledProcessor {
  readonly consumes = QUEUES.transcodes;

  constructor(
    private readonly ladders: LadderLifecycle,
    private readonly registry: NodeRegistry,
    @InjectQueue(QUEUES.transcodes) protected readonly queue: Queue,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    super();
  }

  protected schedules(): readonly ScheduledJob[] {
    return [{ job: 'sweepLadders', everyMs: this.config.sweepIntervalS * 1000 }];
  }

  @HandlesJob('sweepLadders')
  async sweepLadders(_payload: JobPayload<'sweepLadders'>): Promise<Readonly<{ laddersFailedOver: number }>> {
    const live = new Set((await this.registry.list()).map((n) => n.nodeId));
    return { laddersFailedOver: await this.ladders.sweep(live) };
  }
}
