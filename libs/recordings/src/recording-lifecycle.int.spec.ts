import { randomBytes } from 'node:crypto';
import { CapacityLedger, capsOnly } from '@tally/admission';
import { DEFAULT_MODEL, fits, unlimited } from '@tally/capacity';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import type { EgressSummary } from '@tally/livekit';
import { QUEUES } from '@tally/contracts';
import { createTestDatabase, startRedis, type TestRedis } from '@tally/testing';
import { DeliveryWake, WebhookOutbox } from '@tally/webhooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FinaliseQueue } from './finalise.queue.js';
import { RecordingLifecycle } from './recording-lifecycle.js';

const NODE = { id: 'node-a', cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] };
const NOW = new Date('2026-11-22T12:00:00Z');
const LIMITS = { ...unlimited(), recordings: 5 };

describe(RecordingLifecycle.name, () => {
  let prisma: PrismaClient;
  let redis: TestRedis;
  let connection: Redis;
  let ledger: CapacityLedger;
  let deliveries: DeliveryWake;
  let finalise: FinaliseQueue;
  let finaliseJobs: Queue;
  let sut: RecordingLifecycle;
  const appId = 'app_lifecycle0000000';

  beforeAll(async () => {
    prisma = createPrismaClient(await createTestDatabase(inject('postgresUrl')));
    redis = await startRedis();
    connection = new Redis(redis.url);
    ledger = new CapacityLedger(connection);
    deliveries = new DeliveryWake(redis.url);
    finaliseJobs = new Queue(QUEUES.recordings, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    finalise = new FinaliseQueue(finaliseJobs);
    sut = new RecordingLifecycle(prisma, ledger, new WebhookOutbox(deliveries), finalise);
    await prisma.app.create({ data: { id: appId, name: 'lifecycle', webhookUrl: 'http://127.0.0.1:9/hooks' } });
    await prisma.stream.create({
      data: { id: 'str_lifecycle0000000', appId, name: 's', room: `${appId}.str_lifecycle0000000`, status: 'live' },
    });
  });

  afterAll(async () => {
    await finaliseJobs?.close();
    await deliveries?.close();
    connection?.disconnect();
    await redis?.stop();
    await prisma?.$disconnect();
  });

  /** A recording row plus its admitted reservation, as the API leaves them before LiveKit answers. */
  async function startedRecording(): Promise<string> {
    const id = `rec_${randomBytes(8).toString('hex')}`;
    const decision = fits(
      { nodes: [NODE], model: DEFAULT_MODEL, usage: await ledger.usage([NODE.id], [appId]) },
      {
        appId,
        limits: LIMITS,
        kind: 'egress.track_composite',
      },
    );
    if (!decision.ok) throw new Error('not admitted');
    expect((await ledger.reserve(id, decision.placement, capsOnly(LIMITS), [], 60_000)).ok).toBe(true);
    await prisma.recording.create({
      data: {
        id,
        appId,
        streamId: 'str_lifecycle0000000',
        mode: 'track_composite',
        reason: 'test',
        nodeId: NODE.id,
        storage: 'local',
        location: `${appId}/${id}.mp4`,
      },
    });
    return id;
  }

  const egress = (recordingId: string, state: EgressSummary['state'], extra: Partial<EgressSummary> = {}): EgressSummary => ({
    egressId: `EG_${recordingId}`,
    room: `${appId}.str_lifecycle0000000`,
    requestedPath: `/rec/.incoming/${appId}/${recordingId}.mp4`,
    state,
    error: undefined,
    startedAt: NOW,
    endedAt: undefined,
    file: undefined,
    ...extra,
  });

  const eventsOf = async (recordingId: string) =>
    (await prisma.webhookEvent.findMany({ orderBy: { createdAt: 'asc' } }))
      .filter((e) => (e.payload as { data: { id: string } }).data.id === recordingId)
      .map((e) => e.type);

  it('finds the recording by its file path when LiveKit reports the egress before its id was stored, and confirms the reservation', async () => {
    const id = await startedRecording();
    const after = await sut.applyEgress(egress(id, 'active'), NOW);
    expect(after).toMatchObject({ id, status: 'active', egressId: `EG_${id}`, startedAt: NOW });
    expect((await ledger.held(id))?.confirmed).toBe(true);
    expect(await eventsOf(id)).toEqual(['recording.started']);
  });

  it('starts the recording where its file begins, which on a busy host is before egress reported its own start', async () => {
    const id = await startedRecording();
    const fileBegan = new Date(NOW.getTime() - 3_000);
    const file = { location: `/rec/.incoming/${appId}/${id}.mp4`, durationS: 0, sizeBytes: 0, mediaStartedAt: fileBegan };
    expect(await sut.applyEgress(egress(id, 'active', { file }), NOW)).toMatchObject({ status: 'active', startedAt: fileBegan });
  });

  it('applies a webhook and a sweep reporting the same end once: one event, capacity back, one finalise job', async () => {
    const id = await startedRecording();
    await sut.applyEgress(egress(id, 'active'), NOW);
    const ended = egress(id, 'complete', {
      endedAt: NOW,
      file: { location: '/x.mp4', durationS: 12.5, sizeBytes: 1234, mediaStartedAt: undefined },
    });
    const [a, b] = await Promise.all([sut.applyEgress(ended, NOW), sut.applyEgress(ended, NOW)]);
    expect(a?.status).toBe('ending');
    expect(b?.status).toBe('ending');
    expect(await ledger.held(id)).toBeUndefined();
    expect(await eventsOf(id)).toEqual(['recording.started']);
    expect((await finaliseJobs.getJobs(['waiting', 'delayed', 'active'])).filter((j) => j.id === id)).toHaveLength(1);

    const file = {
      location: `${appId}/${id}.mp4`,
      sizeBytes: 1234,
      durationS: 12.4,
      sha256: 'ab'.repeat(32),
      codecs: [{ type: 'video', codec: 'h264' }] as const,
    };
    expect(await sut.complete(id, file)).toBe(true);
    expect(await sut.complete(id, file)).toBe(false);
    expect(await eventsOf(id)).toEqual(['recording.started', 'recording.completed']);
    expect(await prisma.recording.findUnique({ where: { id } })).toMatchObject({ status: 'complete', durationS: 12.4, sizeBytes: 1234n });
  });

  it('fails a recording whose egress failed with LiveKit’s reason, once, and frees its capacity', async () => {
    const id = await startedRecording();
    await sut.applyEgress(egress(id, 'failed', { error: 'pipeline could not start' }), NOW);
    await sut.applyEgress(egress(id, 'failed', { error: 'pipeline could not start' }), NOW);
    expect(await prisma.recording.findUnique({ where: { id } })).toMatchObject({ status: 'failed', error: 'pipeline could not start' });
    expect(await ledger.held(id)).toBeUndefined();
    expect(await eventsOf(id)).toEqual(['recording.failed']);
    // A late "complete" cannot resurrect it.
    await sut.applyEgress(egress(id, 'complete'), NOW);
    expect((await prisma.recording.findUnique({ where: { id } }))?.status).toBe('failed');
  });

  it('ignores an egress no recording started', async () => {
    expect(await sut.applyEgress({ ...egress('rec_unknown0000000', 'active'), requestedPath: '/elsewhere/file.mp4' }, NOW)).toBeUndefined();
  });
});
