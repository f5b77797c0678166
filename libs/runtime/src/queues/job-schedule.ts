import type { Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';

export type Schedule = Readonly<{
  queue: Queue;
  name: string;
  everyMs: number;
  /** How many of the queue's jobs may run at once across every worker replica (BullMQ's global concurrency); unset: no cluster-wide limit. */
  clusterConcurrency?: number;
}>;

/**
 * Registers the repeating job (idempotent: the same id keeps one schedule), and the queue's
 * cluster-wide concurrency, which also lives in Redis.
 */
export async function upsertSchedule({ queue, name, everyMs, clusterConcurrency }: Schedule): Promise<void> {
  if (clusterConcurrency !== undefined) await queue.setGlobalConcurrency(clusterConcurrency);
  await queue.upsertJobScheduler(name, { every: everyMs }, { name, data: {}, opts: { removeOnComplete: 100, removeOnFail: 500 } });
}

/**
 * A job scheduler lives in Redis: when Redis loses its data, the repeating job is gone and nothing
 * would run it again until the worker restarts. This checks every period and registers it again when
 * missing. Returns the function that stops checking.
 */
export function keepScheduled(schedule: Schedule, logger: Logger): () => void {
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void (async () => {
      if (await schedule.queue.getJobScheduler(schedule.name)) return;
      logger.warn(`the ${schedule.name} schedule was gone from Redis (it lost its data?): registering it again`);
      await upsertSchedule(schedule);
    })()
      .catch((error: unknown) => logger.warn(`checking the ${schedule.name} schedule failed: ${String(error)}`))
      .finally(() => (checking = false));
  }, schedule.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
