import { type BeforeApplicationShutdown, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, WorkerHost } from '@nestjs/bullmq';
import { JOBS, type JobKey, type QueueName } from '@tally/contracts';
import type { Job, Queue } from 'bullmq';
import { type JobConsumerHost, runJob } from './handles-job.js';
import { keepScheduled, upsertSchedule } from './job-schedule.js';

/** A job of the registry run every `everyMs`, once per cluster (a BullMQ job scheduler in Redis). */
export type ScheduledJob = Readonly<{ job: JobKey; everyMs: number }>;

/**
 * The consumer of a queue that also carries periodic work. Every worker replica registers the same
 * job schedulers at boot (an upsert by name: one schedule however many replicas), BullMQ produces
 * one job per period, and whichever replica takes it runs it. The schedules are checked again every
 * period, because they live in Redis and go when Redis loses its data.
 *
 * Subclasses declare `consumes`, the queue (`@InjectQueue`), `schedules()` and their `@HandlesJob`
 * methods; failures are logged with the job's name, id and attempt.
 */
export abstract class ScheduledProcessor extends WorkerHost implements JobConsumerHost, OnApplicationBootstrap, BeforeApplicationShutdown {
  abstract readonly consumes: QueueName;
  protected abstract readonly queue: Queue;
  protected readonly logger = new Logger(this.constructor.name);
  private readonly stops: (() => void)[] = [];

  /**
   * How many of this queue's jobs may run at once in the whole cluster. 1 for the sweeps and checks
   * that were written for one worker (`concurrency: 1`): with several worker replicas (control nodes,
   * docs/adr/0043-control-plane-replicas.md) they still never overlap. Unset: only each replica's own concurrency.
   */
  protected readonly clusterConcurrency: number | undefined = undefined;

  /** The periodic jobs of this queue (read once, at boot). */
  protected abstract schedules(): readonly ScheduledJob[];

  async onApplicationBootstrap(): Promise<void> {
    for (const { job, everyMs } of this.schedules()) {
      if (JOBS[job].queue !== this.consumes) throw new Error(`${job} is a job of ${JOBS[job].queue}, not of ${this.consumes}`);
      const schedule = {
        queue: this.queue,
        name: JOBS[job].name,
        everyMs,
        ...(this.clusterConcurrency === undefined ? {} : { clusterConcurrency: this.clusterConcurrency }),
      };
      await upsertSchedule(schedule);
      this.stops.push(keepScheduled(schedule, this.logger));
    }
  }

  beforeApplicationShutdown(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  process(job: Job): Promise<unknown> {
    return runJob(this, job);
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.error(`${job?.name ?? '?'} ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${error.message}`);
  }
}
