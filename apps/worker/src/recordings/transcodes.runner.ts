import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { LadderLifecycle } from '@tally/recordings';
import { Queue, Worker } from 'bullmq';
import { assertEveryJobHandled, handlerFor, type JobHandlers } from '../jobs/job-handlers.js';
import { keepScheduled, upsertSchedule } from '../jobs/kept-schedule.js';

/** Consumes the agents' ladder reports (each moves a ladder and its reservation along) and sweeps stuck ladders. */
@Injectable()
export class TranscodesRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TranscodesRunner.name);
  private readonly handlers: JobHandlers<typeof QUEUES.transcodes>;
  private worker: Worker | undefined;
  private queue: Queue | undefined;
  private stopKeeping: (() => void) | undefined;

  constructor(
    ladders: LadderLifecycle,
    registry: NodeRegistry,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    const handlers = {
      reportLadder: async (payload: unknown) => ladders.apply(JOBS.reportLadder.payload.parse(payload)),
      sweepLadders: async (payload: unknown) => {
        JOBS.sweepLadders.payload.parse(payload);
        const live = new Set((await registry.list()).map((n) => n.nodeId));
        return { laddersFailedOver: await ladders.sweep(live) };
      },
    };
    assertEveryJobHandled(QUEUES.transcodes, handlers);
    this.handlers = handlers;
  }

  async onApplicationBootstrap(): Promise<void> {
    const connection = { url: this.config.redisUrl, maxRetriesPerRequest: null };
    this.queue = new Queue(QUEUES.transcodes, { connection });
    const schedule = { queue: this.queue, name: JOBS.sweepLadders.name, everyMs: this.config.sweepIntervalS * 1000 };
    await upsertSchedule(schedule);
    this.stopKeeping = keepScheduled(schedule, this.logger);
    this.worker = new Worker(QUEUES.transcodes, async (job) => handlerFor(QUEUES.transcodes, this.handlers, job.name)(job.data), {
      connection,
      concurrency: 4,
    });
    this.worker.on('failed', (job, error) => {
      this.logger.error(`${job?.name ?? '?'} ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${error.message}`);
    });
  }

  /** Stops taking jobs and waits for the ones it holds, before Prisma and Redis close (onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopKeeping?.();
    await this.worker?.close();
    await this.queue?.close();
  }
}
