import { randomBytes } from 'node:crypto';
import { CapacityLedger, capsOnly } from '@tally/admission';
import { type AppLimits, DEFAULT_MODEL, fits, unlimited } from '@tally/capacity';
import { QUEUES, type RecordingMode } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { FinaliseQueue, RecordingLifecycle } from '@tally/recordings';
import { createTestDatabase, startRedis, type TestRedis, TestRows } from '@tally/testing';
import { DeliveryWake, WebhookOutbox } from '@tally/webhooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

const LIMITS: AppLimits = { ...unlimited(), recordings: 10 };
const BUDGET = { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] };

/**
 * A real Postgres database and Redis with the recording lifecycle over them, and one app with a
 * live stream: what the worker's recording services need in an integration test.
 */
export type RecordingLifecycleStack = Readonly<{
  prisma: PrismaService;
  redis: TestRedis;
  connection: Redis;
  ledger: CapacityLedger;
  finaliseJobs: Queue;
  lifecycle: RecordingLifecycle;
  rows: TestRows;
  appId: string;
  streamId: string;
  /** An active recording on the node, its reservation confirmed, as admission leaves it. */
  activeRecording(nodeId: string, options: { mode?: RecordingMode; createdAt: Date }): Promise<string>;
  close(): Promise<void>;
}>;

export async function startRecordingLifecycleStack(postgresUrl: string, name: string): Promise<RecordingLifecycleStack> {
  const prisma = new PrismaService(await createTestDatabase(postgresUrl));
  const redis = await startRedis();
  const connection = new Redis(redis.url);
  const ledger = new CapacityLedger(connection);
  const deliveries = new DeliveryWake(redis.url);
  const finaliseJobs = new Queue(QUEUES.recordings, { connection: { url: redis.url, maxRetriesPerRequest: null } });
  const lifecycle = new RecordingLifecycle(prisma, ledger, new WebhookOutbox(deliveries), new FinaliseQueue(finaliseJobs));
  const rows = new TestRows(prisma);
  const suffix = name
    .replace(/[^a-z0-9]/g, '')
    .padEnd(16, '0')
    .slice(0, 16);
  const appId = `app_${suffix}`;
  const streamId = `str_${suffix}`;
  await rows.newApp({ id: appId, name, webhookUrl: 'http://127.0.0.1:9/hooks' });
  await rows.newStream({ id: streamId, appId, status: 'live' });

  return {
    prisma,
    redis,
    connection,
    ledger,
    finaliseJobs,
    lifecycle,
    rows,
    appId,
    streamId,
    async activeRecording(nodeId, { mode = 'track_composite', createdAt }) {
      const id = `rec_${randomBytes(8).toString('hex')}`;
      const kind = mode === 'passthrough' ? 'egress.passthrough' : 'egress.track_composite';
      const decision = fits(
        { nodes: [{ id: nodeId, ...BUDGET }], model: DEFAULT_MODEL, usage: await ledger.usage([nodeId], [appId]) },
        { appId, limits: LIMITS, kind },
      );
      if (!decision.ok) throw new Error(`a ${mode} recording on ${nodeId} was not admitted`);
      if (!(await ledger.reserve(id, decision.placement, capsOnly(LIMITS), [], 60_000)).ok) throw new Error(`${id}: not reserved`);
      await ledger.confirm(id);
      await rows.newRecording({ id, appId, streamId, nodeId, mode, status: 'active', createdAt, startedAt: createdAt });
      return id;
    },
    async close() {
      await finaliseJobs.close();
      await deliveries.close();
      connection.disconnect();
      await redis.stop();
      await prisma.$disconnect();
    },
  };
}
