import { type RedisTarget, redisConnectionOptions } from '@tally/config';
import { JOBS, transcodeQueueOf } from '@tally/contracts';
import { type Job, Worker } from 'bullmq';
import { type Ffmpeg, systemFfmpeg } from './ffmpeg.js';
import { LadderReports } from './ladder-reports.js';
import { runLadder } from './ladder-runner.js';
import type { TranscodeConfig } from './transcode-config.js';

export type TranscodeWorkerDeps = Readonly<{
  nodeId: string;
  redis: RedisTarget;
  config: TranscodeConfig;
  ffmpeg: Ffmpeg;
  log: (line: string) => void;
}>;

export type RunningTranscodes = Readonly<{ close(): Promise<void> }>;

/**
 * Consumes this node's ladder queue (jobs are placed here by admission) and reports each run's
 * start and outcome to the worker, which owns the recording rows and the reservations.
 */
export function startTranscodeWorker(deps: TranscodeWorkerDeps): RunningTranscodes {
  const { nodeId, config, ffmpeg, log } = deps;
  const reports = new LadderReports(deps.redis, nodeId);

  const handle = async (job: Job): Promise<void> => {
    if (job.name !== JOBS.runLadder.name) throw new Error(`unknown job ${job.name}`);
    const run = JOBS.runLadder.payload.parse(job.data);
    const startedAt = new Date().toISOString();
    const ids = { recordingId: run.recordingId, attempt: run.attempt, nodeId, startedAt };
    await reports.send({ outcome: 'started', ...ids });
    log(`ladder ${run.recordingId} (attempt ${run.attempt}): encoding with ${run.encoder}`);
    try {
      const renditions = await runLadder(run, config.recordingsDir, ffmpeg);
      log(`ladder ${run.recordingId}: ready, ${renditions.map((r) => r.name).join(' ')}`);
      await reports.send({ outcome: 'ready', ...ids, endedAt: new Date().toISOString(), renditions });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`ladder ${run.recordingId} (${run.encoder}) failed: ${message}`);
      await reports.send({ outcome: 'failed', ...ids, endedAt: new Date().toISOString(), error: `${run.encoder}: ${message}` });
    }
  };

  const worker = new Worker(transcodeQueueOf(nodeId), handle, {
    connection: redisConnectionOptions(deps.redis, { maxRetriesPerRequest: null }),
    concurrency: config.concurrency,
  });
  worker.on('error', (error: Error) => log(`transcode queue: ${error.message}`));
  return {
    async close() {
      await worker.close();
      await reports.close();
    },
  };
}

/** The hook main.ts calls: this node's ladders, with ffmpeg from PATH and settings from the environment. */
export function startNodeTranscodes(
  agent: Readonly<{ nodeId: string; redis: RedisTarget }>,
  config: TranscodeConfig,
  log: (line: string) => void,
): RunningTranscodes {
  return startTranscodeWorker({ ...agent, config, ffmpeg: systemFfmpeg(), log });
}
