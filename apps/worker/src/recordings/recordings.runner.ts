import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { JOBS, QUEUES } from '@tally/contracts';
import { type Job, Worker } from 'bullmq';
import { assertEveryJobHandled, handlerFor, type JobHandlers } from '../jobs/job-handlers.js';
import { RecordingFinaliser } from './recording-finaliser.service.js';

/** Two finalisations at a time: each reads the whole file once (probe, checksum). */
const CONCURRENCY = 2;

/** Consumes the recordings queue. A finalisation that keeps failing fails its recording, so nothing stays "ending". */
@Injectable()
export class RecordingsRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RecordingsRunner.name);
  private readonly handlers: JobHandlers<typeof QUEUES.recordings>;
  private worker: Worker | undefined;

  constructor(
    private readonly finaliser: RecordingFinaliser,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    const handlers = {
      finaliseRecording: async (payload: unknown) => finaliser.finalise(JOBS.finaliseRecording.payload.parse(payload).recordingId),
    };
    assertEveryJobHandled(QUEUES.recordings, handlers);
    this.handlers = handlers;
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker(QUEUES.recordings, async (job) => handlerFor(QUEUES.recordings, this.handlers, job.name)(job.data), {
      connection: { url: this.config.redisUrl, maxRetriesPerRequest: null },
      concurrency: CONCURRENCY,
    });
    this.worker.on('failed', (job, error) => void this.onFailed(job, error));
  }

  private async onFailed(job: Job | undefined, error: Error): Promise<void> {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? 1);
    this.logger.error(`${job.name} ${job.id ?? '?'} failed (attempt ${job.attemptsMade}${last ? ', giving up' : ''}): ${error.message}`);
    if (!last || job.name !== JOBS.finaliseRecording.name) return;
    const { recordingId } = JOBS.finaliseRecording.payload.parse(job.data);
    await this.finaliser.fail(recordingId, `finalising failed: ${error.message}`).catch((e: unknown) => {
      this.logger.error(`could not mark ${recordingId} failed: ${String(e)}`);
    });
  }

  /** Stops taking jobs and waits for the ones it holds, before Prisma and Redis close (onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }
}
