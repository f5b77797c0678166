import { randomBytes } from 'node:crypto';
import { CapacityLedger, capsOnly } from '@tally/admission';
import { DEFAULT_MODEL, fits, unlimited } from '@tally/capacity';
import { type NodeHeartbeat, QUEUES } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { NodeRegistry } from '@tally/nodes';
import { FinaliseQueue, RecordingLifecycle } from '@tally/recordings';
import { createTestDatabase, startRedis, type TestRedis, TestRows } from '@tally/testing';
import { DeliveryWake, WebhookOutbox } from '@tally/webhooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HEARTBEATS_RETURN_MS, NodeAbsence } from '../reconcile/node-absence.js';
import { NodeDepartures } from './node-departures.service.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const LONG_AGO = new Date(NOW.getTime() - 10 * 60_000);
const LIMITS = { ...unlimited(), recordings: 10 };
const BUDGET = { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] };

/** The wall clock NodeAbsence reads, moved forward by the tests. */
let wallClock = new Date('2026-11-22T12:00:00Z');
const clock = { now: () => wallClock };

const heartbeat = (nodeId: string): NodeHeartbeat => ({
  nodeId,
  role: 'worker',
  budget: BUDGET,
  used: { cpuMillicores: 0, ramMb: 0 },
  labels: {},
  version: '0.1.0',
  startedAt: NOW.toISOString(),
  sentAt: NOW.toISOString(),
});

describe(NodeDepartures.name, () => {
  let prisma: PrismaService;
  let redis: TestRedis;
  let connection: Redis;
  let ledger: CapacityLedger;
  let registry: NodeRegistry;
  let deliveries: DeliveryWake;
  let finalise: FinaliseQueue;
  let finaliseJobs: Queue;
  let sut: NodeDepartures;
  let rows: TestRows;
  const appId = 'app_departures000000';
  const streamId = 'str_departures000000';

  beforeAll(async () => {
    prisma = new PrismaService(await createTestDatabase(inject('postgresUrl')));
    redis = await startRedis();
    connection = new Redis(redis.url);
    ledger = new CapacityLedger(connection);
    registry = new NodeRegistry(connection);
    deliveries = new DeliveryWake(redis.url);
    finaliseJobs = new Queue(QUEUES.recordings, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    finalise = new FinaliseQueue(finaliseJobs);
    sut = new NodeDepartures(
      new RecordingRowsRepository(prisma),
      new NodeAbsence(registry, connection, clock),
      new RecordingLifecycle(prisma, ledger, new WebhookOutbox(deliveries), finalise),
    );
    rows = new TestRows(prisma);
    await rows.newApp({ id: appId, name: 'departures', webhookUrl: 'http://127.0.0.1:9/hooks' });
    await rows.newStream({ id: streamId, appId, status: 'live' });
  });

  afterAll(async () => {
    await finaliseJobs?.close();
    await deliveries?.close();
    connection?.disconnect();
    await redis?.stop();
    await prisma?.$disconnect();
  });

  /** An active recording with its confirmed reservation on the node, created at `createdAt`. */
  async function recordingOn(nodeId: string, createdAt = LONG_AGO): Promise<string> {
    const id = `rec_${randomBytes(8).toString('hex')}`;
    const node = { id: nodeId, ...BUDGET };
    const decision = fits(
      { nodes: [node], model: DEFAULT_MODEL, usage: await ledger.usage([nodeId], [appId]) },
      { appId, limits: LIMITS, kind: 'egress.track_composite' },
    );
    if (!decision.ok) throw new Error('not admitted');
    expect((await ledger.reserve(id, decision.placement, capsOnly(LIMITS), [], 60_000)).ok).toBe(true);
    await ledger.confirm(id);
    await rows.newRecording({ id, appId, streamId, nodeId, status: 'active', createdAt, startedAt: createdAt });
    return id;
  }

  const eventsOf = async (recordingId: string) =>
    (await prisma.webhookEvent.findMany({ orderBy: { createdAt: 'asc' } }))
      .filter((e) => (e.payload as { data: { id: string } }).data.id === recordingId)
      .map((e) => e.type);

  it('fails a recording whose node has no heartbeat, once, freeing its capacity and telling the app', async () => {
    const id = await recordingOn('dep-gone');

    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 1 });
    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 0 });

    expect(await prisma.recording.findUnique({ where: { id } })).toMatchObject({
      status: 'failed',
      error: 'node dep-gone left the pool',
      endedAt: NOW,
    });
    expect(await ledger.held(id)).toBeUndefined();
    expect(await eventsOf(id)).toEqual(['recording.failed']);
  });

  it('leaves recordings on live nodes alone, draining ones included', async () => {
    await registry.heartbeat(heartbeat('dep-live'), 60);
    await registry.heartbeat(heartbeat('dep-draining'), 60);
    await registry.setStatus('dep-draining', 'draining');
    const onLive = await recordingOn('dep-live');
    const onDraining = await recordingOn('dep-draining');

    await sut.run(NOW);

    for (const id of [onLive, onDraining]) {
      expect((await prisma.recording.findUnique({ where: { id } }))?.status).toBe('active');
      expect((await ledger.held(id))?.confirmed).toBe(true);
      expect(await eventsOf(id)).toEqual([]);
    }
  });

  it('fails recordings once their node leaves the pool, but not those too young to judge', async () => {
    await registry.heartbeat(heartbeat('dep-leaving'), 60);
    const old = await recordingOn('dep-leaving');
    const young = await recordingOn('dep-leaving', new Date(NOW.getTime() - 5_000));
    await sut.run(NOW);
    expect((await prisma.recording.findUnique({ where: { id: old } }))?.status).toBe('active');

    await registry.remove('dep-leaving');
    await sut.run(NOW);

    expect((await prisma.recording.findUnique({ where: { id: old } }))?.status).toBe('failed');
    expect((await prisma.recording.findUnique({ where: { id: young } }))?.status).toBe('active');
    expect(await ledger.held(young)).toBeDefined();
  });

  it('fails nothing while heartbeats may not be back after the Redis connection came back (a failover), and then does', async () => {
    const id = await recordingOn('dep-after-failover');
    // The connection drops and comes back, as it does when it follows a promoted replica.
    const ready = new Promise((resolve) => connection.once('ready', resolve));
    connection.disconnect(true);
    await ready;

    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 0 });
    expect((await prisma.recording.findUnique({ where: { id } }))?.status).toBe('active');
    expect((await ledger.held(id))?.confirmed).toBe(true);

    wallClock = new Date(wallClock.getTime() + HEARTBEATS_RETURN_MS);
    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 1 });
    expect((await prisma.recording.findUnique({ where: { id } }))?.status).toBe('failed');
  });

  it('treats a node whose heartbeat it cannot parse as alive', async () => {
    await connection.set('tally:{nodes}:hb:dep-other-version', JSON.stringify({ nodeId: 'dep-other-version', shape: 'new' }), 'EX', 60);
    await connection.sadd('tally:{nodes}:index', 'dep-other-version');
    const id = await recordingOn('dep-other-version');

    await sut.run(NOW);

    expect((await prisma.recording.findUnique({ where: { id } }))?.status).toBe('active');
  });
});
