import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type RedisTarget, redisConnectionOptions } from '@tally/config';
import { JOBS, nodeReportQueueOf, recordingNodeQueueOf, type RecordingStaged, stagingKey } from '@tally/contracts';
import { type Job, Queue, Worker } from 'bullmq';
import { StagingBucket } from './staging-bucket.js';
import type { StagingStoreConfig } from './staging-config.js';

/** The `stage` backoff of a staging job's retries (the worker queues it with 1,000 attempts): 2 s doubling up to 5 minutes. */
export const stageBackoffMs = (attemptsMade: number): number => Math.min(2_000 * 2 ** Math.max(0, attemptsMade - 1), 300_000);

export type StagingDeps = Readonly<{
  nodeId: string;
  redis: RedisTarget;
  recordingsDir: string;
  objectStore: StagingStoreConfig | undefined;
  log: (line: string) => void;
}>;

export type RunningStaging = Readonly<{ close(): Promise<void> }>;

/**
 * Consumes this node's staging queue: each file egress wrote here goes into the bucket's staging
 * area, its size is read back, and only then is the local file deleted; the worker on the origin is
 * told which files are staged and which this node never had. A failed step throws (the file stays)
 * and the job is tried again, by this agent or the next one after a restart.
 */
export function startStagingWorker(deps: StagingDeps): RunningStaging {
  const { nodeId, recordingsDir, log } = deps;
  const connection = redisConnectionOptions(deps.redis, { maxRetriesPerRequest: null });
  const bucket = deps.objectStore ? new StagingBucket(deps.objectStore) : undefined;
  const reports = new Queue(nodeReportQueueOf(nodeId), { connection });

  const stageOne = async (location: string): Promise<'staged' | 'missing'> => {
    const path = join(recordingsDir, '.incoming', location);
    const sizeBytes = await stat(path).then(
      (s) => (s.isFile() ? s.size : undefined),
      () => undefined,
    );
    const key = stagingKey(location);
    if (sizeBytes === undefined) return bucket && (await bucket.sizeOf(key)) !== undefined ? 'staged' : 'missing';
    if (!bucket) throw new Error(`${location} is here but this node has no object store (TALLY_S3_BUCKET) to stage it in`);
    await bucket.put(key, path, sizeBytes);
    const stored = await bucket.sizeOf(key);
    if (stored !== sizeBytes) throw new Error(`the staged object ${key} holds ${stored ?? 'no'} bytes, the file ${sizeBytes}`);
    await rm(path, { force: true });
    log(`staged ${location} (${sizeBytes} bytes)`);
    return 'staged';
  };

  const handle = async (job: Job): Promise<void> => {
    if (job.name !== JOBS.stageRecording.name) throw new Error(`unknown job ${job.name}`);
    const request = JOBS.stageRecording.payload.parse(job.data);
    const report: RecordingStaged = { recordingId: request.recordingId, nodeId, staged: [], missing: [] };
    for (const location of request.locations) report[await stageOne(location)].push(location);
    await discardReplaced(recordingsDir, request.discard, log);
    await reports.add(JOBS.reportStaged.name, JOBS.reportStaged.payload.parse(report), {
      jobId: `${request.recordingId}.staged`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 2_000 },
      removeOnComplete: true,
      removeOnFail: true,
    });
  };

  const worker = new Worker(recordingNodeQueueOf(nodeId), handle, {
    connection,
    concurrency: 2,
    settings: { backoffStrategy: stageBackoffMs },
  });
  worker.on('error', (error: Error) => log(`staging queue: ${error.message}`));
  worker.on('failed', (job, error) => log(`staging ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${error.message}`));
  return {
    async close() {
      await worker.close();
      await reports.close();
      bucket?.close();
    },
  };
}

/** Deletes what replaced egress attempts began to write here: nothing stages or reads it, it is only space. */
export async function discardReplaced(recordingsDir: string, locations: readonly string[], log: (line: string) => void): Promise<void> {
  for (const location of locations) {
    const path = join(recordingsDir, '.incoming', location);
    const found = await stat(path).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!found) continue;
    await rm(path, { force: true });
    log(`deleted ${location} (a replaced attempt's file)`);
  }
}
