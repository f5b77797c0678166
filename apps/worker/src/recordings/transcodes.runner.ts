import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { LadderLifecycle } from '@tally/recordings';
import { Worker } from 'bullmq';
import { assertEveryJobHandled, handlerFor, type JobHandlers } from '../jobs/job-handlers.js';

/** Consumes the agents' ladder reports: each moves a recording's ladder and its reservation along. */
@Injectable()
export class TranscodesRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TranscodesRunner.name);
  private readonly handlers: JobHandlers<typeof QUEUES.transcodes>;
  private worker: Worker | undefined;

  constructor(
    ladders: LadderLifecycle,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    const handlers = {
      reportLadder: async (payload: unknown) => ladders.apply(JOBS.reportLadder.payload.parse(payload)),
    };
    assertEveryJobHandled(QUEUES.transcodes, handlers);
    this.handlers = handlers;
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker(QUEUES.transcodes, async (job) => handlerFor(QUEUES.transcodes, this.handlers, job.name)(job.data), {
      connection: { url: this.config.redisUrl, maxRetriesPerRequest: null },
      concurrency: 4,
    });
    this.worker.on('failed', (job, error) => {
      this.logger.error(`${job?.name ?? '?'} ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${error.message}`);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }
}
