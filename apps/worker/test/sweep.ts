import { JOBS } from '@tally/contracts';
import { type ApiClient, waitFor } from '@tally/testing';
import { type ConnectionOptions, Queue } from 'bullmq';

/**
 * Exactly one reconciliation sweep, asked for through the API, waited for until the worker finished
 * it; `redis` is a URL or the connection options of the Redis the queues live on (Sentinels too).
 */
export async function sweepOnce(admin: ApiClient, redis: string | ConnectionOptions): Promise<Record<string, Record<string, number>>> {
  const requested = await admin.post<{ jobId: string }>('/v1/reconcile');
  if (requested.status !== 202) throw new Error(`POST /v1/reconcile: ${requested.status}`);
  const connection = typeof redis === 'string' ? { url: redis, maxRetriesPerRequest: null } : redis;
  const queue = new Queue(JOBS.reconcileStreams.queue, { connection });
  try {
    const job = await waitFor(
      `sweep ${requested.body.jobId} to finish`,
      async () => {
        const job = await queue.getJob(requested.body.jobId);
        return job?.finishedOn === undefined ? undefined : job;
      },
      180_000,
    );
    if (job.failedReason) throw new Error(`sweep failed: ${job.failedReason}`);
    return job.returnvalue as Record<string, Record<string, number>>;
  } finally {
    await queue.close();
  }
}
