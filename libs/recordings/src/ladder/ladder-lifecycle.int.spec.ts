import { randomBytes } from 'node:crypto';
import { Admitter, CapacityLedger, policiesFrom } from '@tally/admission';
import { DEFAULT_MODEL, type NodeBudget } from '@tally/capacity';
import { type LadderRun, transcodeQueueOf } from '@tally/contracts';
import { createPrismaClient, type PrismaClient, type Recording } from '@tally/db';
import { totalsOf, UsageIntervals, UsageReader } from '@tally/metering';
import { createTestDatabase, startRedis, type TestRedis } from '@tally/testing';
import { DeliveryWake, WebhookOutbox } from '@tally/webhooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LadderLifecycle, ladderReservationId } from './ladder-lifecycle.js';
import { LadderQueue } from './ladder.queue.js';

const GPU: NodeBudget = { id: 'gpu-node', cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [{ name: 'RTX', nvencSessions: 1 }] };
const CPU: NodeBudget = { id: 'cpu-node', cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] };

describe(LadderLifecycle.name, () => {
  let prisma: PrismaClient;
  let redis: TestRedis;
  let connection: Redis;
  let ledger: CapacityLedger;
  let deliveries: DeliveryWake;
  let ladderQueue: LadderQueue;
  let sut: LadderLifecycle;
  let nodes: NodeBudget[] = [GPU, CPU];
  const queues: Queue[] = [];

  beforeAll(async () => {
    prisma = createPrismaClient(await createTestDatabase(inject('postgresUrl')));
    redis = await startRedis();
    connection = new Redis(redis.url);
    ledger = new CapacityLedger(connection);
    const pool = {
      liveNodes: () => Promise.resolve([GPU, CPU]),
      schedulableNodes: () => Promise.resolve(nodes),
      ...policiesFrom(async () => (await prisma.app.findMany()).map((a) => ({ appId: a.id, limits: a.limits as Record<string, number> }))),
    };
    deliveries = new DeliveryWake(redis.url);
    ladderQueue = new LadderQueue({ url: redis.url, maxRetriesPerRequest: null });
    sut = new LadderLifecycle(
      prisma,
      new Admitter(ledger, pool, DEFAULT_MODEL),
      ledger,
      new WebhookOutbox(deliveries),
      ladderQueue,
      new UsageIntervals(prisma),
    );
  });

  afterAll(async () => {
    await Promise.all(queues.map((q) => q.close()));
    await ladderQueue?.close();
    await deliveries?.close();
    connection?.disconnect();
    await redis?.stop();
    await prisma?.$disconnect();
  });

  /** A complete recording with video, in a fresh app. */
  async function completeRecording(
    overrides: { status?: Recording['status']; codecs?: { type: string; codec: string }[] } = {},
    // Explicit: the default transcode cap follows the test node's size.
    limits: Record<string, number> = { transcodes: 4 },
  ): Promise<Recording> {
    const suffix = randomBytes(8).toString('hex');
    const appId = `app_${suffix}`;
    const streamId = `str_${suffix}`;
    await prisma.app.create({ data: { id: appId, name: 'ladders', limits, webhookUrl: 'http://127.0.0.1:9/hooks' } });
    await prisma.stream.create({ data: { id: streamId, appId, name: 's', room: `${appId}.${streamId}`, status: 'ended' } });
    const id = `rec_${suffix}`;
    return prisma.recording.create({
      data: {
        id,
        appId,
        streamId,
        mode: 'track_composite',
        reason: 'test',
        nodeId: CPU.id,
        storage: 'local',
        location: `${appId}/${id}.mp4`,
        status: 'complete',
        codecs: [
          { type: 'video', codec: 'h264' },
          { type: 'audio', codec: 'aac' },
        ],
        ...overrides,
      },
    });
  }

  const reload = (id: string) => prisma.recording.findUniqueOrThrow({ where: { id } });
  const eventsOf = async (recordingId: string) =>
    (await prisma.webhookEvent.findMany({ orderBy: { createdAt: 'asc' } }))
      .filter((e) => (e.payload as { data: { id: string } }).data.id === recordingId)
      .map((e) => e.type);
  async function queuedRuns(nodeId: string): Promise<LadderRun[]> {
    const queue = new Queue(transcodeQueueOf(nodeId), { connection: { url: redis.url } });
    queues.push(queue);
    return (await queue.getJobs(['waiting'])).map((j) => j.data as LadderRun);
  }

  it('prefers a free NVENC session, sends a failed GPU run to the CPU, and frees the reservation when ready', async () => {
    nodes = [GPU, CPU];
    const recording = await completeRecording();
    const requested = await sut.request(recording);
    expect(requested.ok).toBe(true);
    expect(await reload(recording.id)).toMatchObject({
      ladderStatus: 'queued',
      ladderEncoder: 'nvenc',
      ladderNodeId: GPU.id,
      ladderAttempt: 1,
    });
    expect(await ledger.held(ladderReservationId(recording.id))).toMatchObject({
      nodeId: GPU.id,
      kind: 'transcode.nvenc',
      confirmed: false,
    });
    expect((await queuedRuns(GPU.id)).filter((r) => r.recordingId === recording.id)).toEqual([
      {
        recordingId: recording.id,
        appId: recording.appId,
        attempt: 1,
        encoder: 'nvenc',
        source: recording.location,
        ladderDir: `${recording.appId}/${recording.id}.ladder`,
      },
    ]);

    // Asking again while it is queued changes nothing.
    await sut.request(await reload(recording.id));
    expect((await reload(recording.id)).ladderAttempt).toBe(1);

    await sut.apply({ outcome: 'started', recordingId: recording.id, attempt: 1, nodeId: GPU.id });
    expect((await reload(recording.id)).ladderStatus).toBe('running');
    expect((await ledger.held(ladderReservationId(recording.id)))?.confirmed).toBe(true);

    await sut.apply({ outcome: 'failed', recordingId: recording.id, attempt: 1, nodeId: GPU.id, error: 'nvenc: no device' });
    const fallback = await reload(recording.id);
    expect(fallback).toMatchObject({ ladderStatus: 'queued', ladderEncoder: 'x264', ladderAttempt: 2, ladderError: null });
    expect(await ledger.held(ladderReservationId(recording.id))).toMatchObject({ kind: 'transcode.cpu', nodeId: fallback.ladderNodeId });
    expect((await queuedRuns(fallback.ladderNodeId ?? '')).some((r) => r.recordingId === recording.id && r.encoder === 'x264')).toBe(true);

    // A late report of the GPU attempt is ignored.
    const renditions = [{ name: '720p', width: 1280, height: 720, bitrateKbps: 2800 }];
    await sut.apply({ outcome: 'ready', recordingId: recording.id, attempt: 1, nodeId: GPU.id, renditions });
    expect((await reload(recording.id)).ladderStatus).toBe('queued');

    await sut.apply({ outcome: 'ready', recordingId: recording.id, attempt: 2, nodeId: fallback.ladderNodeId ?? '', renditions });
    expect(await reload(recording.id)).toMatchObject({ ladderStatus: 'ready', ladderRenditions: renditions });
    expect(await ledger.held(ladderReservationId(recording.id))).toBeUndefined();
    expect(await eventsOf(recording.id)).toEqual(['recording.ladder_ready']);
  });

  it('answers why a ladder cannot start: not complete, no video, the app quota, no node', async () => {
    nodes = [CPU];
    expect(await sut.request(await completeRecording({ status: 'active' }))).toMatchObject({ ok: false, reason: 'not_complete' });
    expect(await sut.request(await completeRecording({ codecs: [{ type: 'audio', codec: 'opus' }] }))).toMatchObject({
      ok: false,
      reason: 'no_video',
    });
    expect(await sut.request(await completeRecording({}, { transcodes: 0 }))).toMatchObject({
      ok: false,
      refusal: { code: 'quota_exceeded', resource: 'app.transcodes' },
    });
    // Every node drained: the pool still has the capacity (quotas stand), but no node takes new work.
    nodes = [];
    const stranded = await completeRecording();
    expect(await sut.request(stranded)).toMatchObject({ ok: false, refusal: { code: 'capacity_exhausted', resource: 'node.unavailable' } });
    expect((await reload(stranded.id)).ladderStatus).toBeNull();
    // On the app's behalf the refusal is recorded, and the app told.
    await sut.requestForApp(stranded);
    expect(await reload(stranded.id)).toMatchObject({
      ladderStatus: 'failed',
      ladderError: expect.stringMatching(/^refused: /) as unknown,
    });
    expect(await eventsOf(stranded.id)).toEqual(['recording.ladder_failed']);
  });

  it('fails a CPU ladder over when its node leaves the pool, freeing its reservation', async () => {
    nodes = [CPU];
    const recording = await completeRecording();
    expect((await sut.request(recording)).ok).toBe(true);
    await sut.apply({ outcome: 'started', recordingId: recording.id, attempt: 1, nodeId: CPU.id });
    expect(await sut.sweep(new Set([CPU.id]))).toBe(0);
    expect(await sut.sweep(new Set())).toBe(1);
    expect(await reload(recording.id)).toMatchObject({ ladderStatus: 'failed', ladderError: `node ${CPU.id} left the pool` });
    expect(await ledger.held(ladderReservationId(recording.id))).toBeUndefined();
    expect(await eventsOf(recording.id)).toEqual(['recording.ladder_failed']);
    // After a failure, asking again starts a new attempt.
    await sut.request(await reload(recording.id));
    expect(await reload(recording.id)).toMatchObject({ ladderStatus: 'queued', ladderAttempt: 2 });
  });

  it('bills each attempt once, GPU apart from CPU, on the agent clock, whatever the order and repetition of its reports', async () => {
    nodes = [GPU, CPU];
    const recording = await completeRecording();
    expect((await sut.request(recording)).ok).toBe(true);
    const t0 = Date.now() - 20 * 60_000;
    const at = (minutes: number): string => new Date(t0 + minutes * 60_000).toISOString();
    const gpu = { recordingId: recording.id, attempt: 1, nodeId: GPU.id, startedAt: at(0) };
    await sut.apply({ outcome: 'started', ...gpu });
    await sut.apply({ outcome: 'failed', ...gpu, endedAt: at(2), error: 'nvenc: no device' });
    await sut.apply({ outcome: 'failed', ...gpu, endedAt: at(3), error: 'nvenc: no device' });
    const fallback = await reload(recording.id);
    expect(fallback).toMatchObject({ ladderEncoder: 'x264', ladderAttempt: 2 });

    // The CPU run's outcome is applied before its start, and its start twice.
    const cpu = { recordingId: recording.id, attempt: 2, nodeId: fallback.ladderNodeId ?? '', startedAt: at(4) };
    const renditions = [{ name: '360p', width: 640, height: 360, bitrateKbps: 800 }];
    await sut.apply({ outcome: 'ready', ...cpu, endedAt: at(9.5), renditions });
    await sut.apply({ outcome: 'started', ...cpu });
    await sut.apply({ outcome: 'started', ...cpu, startedAt: at(5) });
    expect((await reload(recording.id)).ladderStatus).toBe('ready');

    const from = new Date(Math.floor(t0 / 3_600_000) * 3_600_000);
    const hours = await new UsageReader(prisma).hourly(
      { appId: recording.appId },
      from,
      new Date(from.getTime() + 2 * 3_600_000),
      new Date(),
    );
    const billed = totalsOf(hours).ladderMinutes;
    expect(billed.gpu).toBeCloseTo(2, 9);
    expect(billed.cpu).toBeCloseTo(5.5, 9);
  });
});
