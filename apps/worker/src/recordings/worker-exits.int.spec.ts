import { randomBytes } from 'node:crypto';
import { CapacityLedger, capsOnly } from '@tally/admission';
import { DEFAULT_MODEL, fits, unlimited } from '@tally/capacity';
import { QUEUES, type RecordingMode } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { FinaliseQueue, RecordingLifecycle } from '@tally/recordings';
import { createTestDatabase, startRedis, type TestRedis, TestRows } from '@tally/testing';
import { DeliveryWake, WebhookOutbox } from '@tally/webhooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RecordingRowsRepository } from './recording-rows.repository.js';
import { WorkerExits } from './worker-exits.service.js';

const STARTED = new Date('2026-11-29T12:00:00Z');
const EXITED = new Date('2026-11-29T12:05:00Z');
const LIMITS = { ...unlimited(), recordings: 10 };
const BUDGET = { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] };

describe(WorkerExits.name, () => {
  let prisma: PrismaService;
  let redis: TestRedis;
  let connection: Redis;
  let ledger: CapacityLedger;
  let deliveries: DeliveryWake;
  let finaliseJobs: Queue;
  let sut: WorkerExits;
  let rows: TestRows;
  const appId = 'app_workerexits00000';
  const streamId = 'str_workerexits00000';

  beforeAll(async () => {
    prisma = new PrismaService(await createTestDatabase(inject('postgresUrl')));
    redis = await startRedis();
    connection = new Redis(redis.url);
    ledger = new CapacityLedger(connection);
    deliveries = new DeliveryWake(redis.url);
    finaliseJobs = new Queue(QUEUES.recordings, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    sut = new WorkerExits(
      new RecordingRowsRepository(prisma),
      new RecordingLifecycle(prisma, ledger, new WebhookOutbox(deliveries), new FinaliseQueue(finaliseJobs)),
    );
    rows = new TestRows(prisma);
    await rows.newApp({ id: appId, name: 'worker exits', webhookUrl: 'http://127.0.0.1:9/hooks' });
    await rows.newStream({ id: streamId, appId, status: 'live' });
  });

  afterAll(async () => {
    await finaliseJobs?.close();
    await deliveries?.close();
    connection?.disconnect();
    await redis?.stop();
    await prisma?.$disconnect();
  });

  /** An active recording of `mode` on the node, its reservation confirmed; passthrough gets two active egresses. */
  async function recordingOn(nodeId: string, mode: RecordingMode): Promise<string> {
    const id = `rec_${randomBytes(8).toString('hex')}`;
    const kind = mode === 'passthrough' ? 'egress.passthrough' : 'egress.track_composite';
    const decision = fits(
      { nodes: [{ id: nodeId, ...BUDGET }], model: DEFAULT_MODEL, usage: await ledger.usage([nodeId], [appId]) },
      { appId, limits: LIMITS, kind },
    );
    if (!decision.ok) throw new Error('not admitted');
    expect((await ledger.reserve(id, decision.placement, capsOnly(LIMITS), [], 60_000)).ok).toBe(true);
    await ledger.confirm(id);
    await rows.newRecording({ id, appId, streamId, nodeId, mode, status: 'active', createdAt: STARTED, startedAt: STARTED });
    if (mode === 'passthrough')
      for (const track of ['video', 'audio'] as const)
        await prisma.recordingEgress.create({
          data: {
            recordingId: id,
            track,
            trackSid: `TR_${track}`,
            egressId: `EG_${id}_${track}`,
            state: 'active',
            startedAt: STARTED,
            mediaStartedAt: STARTED,
            location: `${appId}/${id}.${track}.webm`,
          },
        });
    return id;
  }

  const exit = (nodeId: string) => ({
    nodeId,
    kind: 'egress' as const,
    workerId: 'egress',
    reason: 'killed by SIGKILL',
    at: EXITED.toISOString(),
  });

  it('cuts a passthrough recording where its egress worker ended: its files are joined up to there, and it completes saying so', async () => {
    const id = await recordingOn('exit-pass', 'passthrough');

    expect(await sut.handle(exit('exit-pass'))).toEqual({ recordingsFailed: 0 });

    expect(await prisma.recording.findUnique({ where: { id } })).toMatchObject({
      status: 'ending',
      endedAt: EXITED,
      error: 'video egress failed: egress worker on exit-pass: killed by SIGKILL; the file keeps what was recorded until then',
    });
    const egresses = await prisma.recordingEgress.findMany({ where: { recordingId: id } });
    expect(egresses.map((e) => e.state)).toEqual(['failed', 'failed']);
    // Handed to the finaliser, which joins the two files as they were cut; the capacity is free.
    expect(await finaliseJobs.getJob(id)).toBeDefined();
    expect(await ledger.held(id)).toBeUndefined();
  });

  it('fails the other recordings the worker was writing, and leaves other nodes alone', async () => {
    const composite = await recordingOn('exit-comp', 'track_composite');
    const elsewhere = await recordingOn('exit-other', 'passthrough');

    expect(await sut.handle(exit('exit-comp'))).toEqual({ recordingsFailed: 1 });

    expect(await prisma.recording.findUnique({ where: { id: composite } })).toMatchObject({
      status: 'failed',
      error: 'egress worker on exit-comp: killed by SIGKILL',
    });
    expect(await ledger.held(composite)).toBeUndefined();
    expect((await prisma.recording.findUnique({ where: { id: elsewhere } }))?.status).toBe('active');
    expect((await ledger.held(elsewhere))?.confirmed).toBe(true);
  });
});
