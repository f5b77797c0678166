import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { Admitter } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Clock } from '../clock.js';
import { IngressReconciler } from '../ingresses/ingress-reconciler.service.js';
import { EgressReconciler } from '../recordings/egress-reconciler.service.js';
import { NodeDepartures } from '../recordings/node-departures.service.js';
import { AppTeardown } from '../reconcile/app-teardown.service.js';
import { CamerasReconciler } from '../reconcile/cameras-reconciler.service.js';
import { RedisLossDetector } from '../reconcile/redis-loss.js';
import { ReservationAuditor } from '../reconcile/reservation-auditor.service.js';
import { HlsReconciler } from '../recordings/hls-reconciler.service.js';
import { LadderRestorer } from '../recordings/ladder-restorer.service.js';
import { StreamsReconciler } from '../reconcile/streams-reconciler.service.js';
import { WorkerExits } from '../recordings/worker-exits.service.js';
import { assertEveryJobHandled, handlerFor, type JobHandlers } from './job-handlers.js';
import { keepScheduled, upsertSchedule } from './kept-schedule.js';
import { RepairCounter } from './repair-counter.js';

/** How often the worker checks whether Redis lost its data (one EXISTS). */
const LOSS_CHECK_MS = 2_000;

/** Schedules and consumes the maintenance queue. Processors stay thin: parse, then call a service. */
@Injectable()
export class MaintenanceRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MaintenanceRunner.name);
  private readonly handlers: JobHandlers<typeof QUEUES.maintenance>;
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private redis: Redis | undefined;
  private repairs: RepairCounter | undefined;
  private stopKeeping: (() => void) | undefined;
  private stopWatching: (() => void) | undefined;

  constructor(
    reconciler: StreamsReconciler,
    egresses: EgressReconciler,
    workerExits: WorkerExits,
    departures: NodeDepartures,
    ingresses: IngressReconciler,
    cameras: CamerasReconciler,
    apps: AppTeardown,
    hls: HlsReconciler,
    ladders: LadderRestorer,
    audit: ReservationAuditor,
    private readonly redisLossDetector: RedisLossDetector,
    admitter: Admitter,
    clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    const handlers = {
      reconcileStreams: async (payload: unknown) => {
        JOBS.reconcileStreams.payload.parse(payload);
        const now = clock.now();
        // First: whether Redis lost its data, so nothing below ends work for state that was lost with it.
        const loss = await redisLossDetector.observe(now);
        // Deleted apps first: what they ran is stopped and released before anything is judged or restored.
        const deletedApps = await apps.run(now);
        const streams = await reconciler.run(now, loss);
        // Departures first, so a recording lost with its node fails with that reason, not "egress vanished".
        const recordings = { ...(await departures.run(now)), ...(await egresses.run(now, loss)) };
        const report = {
          apps: deletedApps,
          streams,
          recordings,
          hls: await hls.run(now, loss),
          ladders: await ladders.run(),
          ingresses: await ingresses.run(now, loss),
          cameras: await cameras.run(now),
          quotas: { guaranteesRestored: await admitter.restoreGuaranteePolicies() },
          // Last: what the reconcilers above left held for an owner that is gone or finished.
          reservations: await audit.run(now),
        };
        // Counted only when something had to be restored: a first sweep on a new Redis is no loss.
        const restored =
          streams.reservationsRestored +
          recordings.reservationsRestored +
          report.hls.reservationsRestored +
          report.ladders.reservationsRestored +
          report.ingresses.reservationsRestored +
          report.ingresses.workRetained +
          report.cameras.reservationsRestored +
          report.quotas.guaranteesRestored;
        const withLoss = { redis: { dataLost: (await redisLossDetector.settle(loss, restored)) ? 1 : 0 }, ...report };
        await this.repairs?.add(withLoss);
        return withLoss;
      },
      workerExited: (payload: unknown) => workerExits.handle(JOBS.workerExited.payload.parse(payload)),
    };
    assertEveryJobHandled(QUEUES.maintenance, handlers);
    this.handlers = handlers;
  }

  async onApplicationBootstrap(): Promise<void> {
    const connection = { url: this.config.redisUrl, maxRetriesPerRequest: null };
    this.queue = new Queue(QUEUES.maintenance, { connection });
    this.redis = new Redis(this.config.redisUrl, { maxRetriesPerRequest: 3 });
    this.repairs = new RepairCounter(this.redis);
    const schedule = { queue: this.queue, name: JOBS.reconcileStreams.name, everyMs: this.config.sweepIntervalS * 1000 };
    await upsertSchedule(schedule);
    this.stopKeeping = keepScheduled(schedule, this.logger);
    const queue = this.queue;
    this.stopWatching = this.redisLossDetector.watch(LOSS_CHECK_MS, async (noticedAt) => {
      await queue.add(JOBS.reconcileStreams.name, {}, { jobId: `redis-loss-${noticedAt}`, removeOnComplete: 100, removeOnFail: 500 });
    });
    this.worker = new Worker(
      QUEUES.maintenance,
      async (job) => {
        return handlerFor(QUEUES.maintenance, this.handlers, job.name)(job.data);
      },
      { connection, concurrency: 1 },
    );
    this.worker.on('failed', (job, error) => this.logger.error(`job ${job?.name ?? '?'} failed: ${error.message}`));
  }

  /** Stops taking jobs and waits for the ones it holds, before Prisma and Redis close (onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopKeeping?.();
    this.stopWatching?.();
    await this.worker?.close();
    await this.queue?.close();
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}
