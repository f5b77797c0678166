import type { NodeHeartbeat } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RecordingLifecycleStack, startRecordingLifecycleStack } from '../../test/recording-lifecycle-stack.js';
import { HEARTBEATS_RETURN_MS, NodeAbsence } from '../reconcile/node-absence.js';
import { NodeDepartures } from './node-departures.service.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const LONG_AGO = new Date(NOW.getTime() - 10 * 60_000);
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
  let stack: RecordingLifecycleStack;
  let registry: NodeRegistry;
  let sut: NodeDepartures;

  beforeAll(async () => {
    stack = await startRecordingLifecycleStack(inject('postgresUrl'), 'departures');
    registry = new NodeRegistry(stack.connection);
    sut = new NodeDepartures(
      new RecordingRowsRepository(stack.prisma),
      new NodeAbsence(registry, stack.connection, clock),
      stack.lifecycle,
    );
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** An active recording with its confirmed reservation on the node, created at `createdAt`. */
  const recordingOn = (nodeId: string, createdAt = LONG_AGO) => stack.activeRecording(nodeId, { createdAt });

  const eventsOf = async (recordingId: string) =>
    (await stack.prisma.webhookEvent.findMany({ orderBy: { createdAt: 'asc' } }))
      .filter((e) => (e.payload as { data: { id: string } }).data.id === recordingId)
      .map((e) => e.type);

  it('fails a recording whose node has no heartbeat, once, freeing its capacity and telling the app', async () => {
    const id = await recordingOn('dep-gone');

    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 1 });
    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 0 });

    expect(await stack.prisma.recording.findUnique({ where: { id } })).toMatchObject({
      status: 'failed',
      error: 'node dep-gone left the pool',
      endedAt: NOW,
    });
    expect(await stack.ledger.held(id)).toBeUndefined();
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
      expect((await stack.prisma.recording.findUnique({ where: { id } }))?.status).toBe('active');
      expect((await stack.ledger.held(id))?.confirmed).toBe(true);
      expect(await eventsOf(id)).toEqual([]);
    }
  });

  it('fails recordings once their node leaves the pool, but not those too young to judge', async () => {
    await registry.heartbeat(heartbeat('dep-leaving'), 60);
    const old = await recordingOn('dep-leaving');
    const young = await recordingOn('dep-leaving', new Date(NOW.getTime() - 5_000));
    await sut.run(NOW);
    expect((await stack.prisma.recording.findUnique({ where: { id: old } }))?.status).toBe('active');

    await registry.remove('dep-leaving');
    await sut.run(NOW);

    expect((await stack.prisma.recording.findUnique({ where: { id: old } }))?.status).toBe('failed');
    expect((await stack.prisma.recording.findUnique({ where: { id: young } }))?.status).toBe('active');
    expect(await stack.ledger.held(young)).toBeDefined();
  });

  it('fails nothing while heartbeats may not be back after the Redis connection came back (a failover), and then does', async () => {
    const id = await recordingOn('dep-after-failover');
    // The connection drops and comes back, as it does when it follows a promoted replica.
    const ready = new Promise((resolve) => stack.connection.once('ready', resolve));
    stack.connection.disconnect(true);
    await ready;

    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 0 });
    expect((await stack.prisma.recording.findUnique({ where: { id } }))?.status).toBe('active');
    expect((await stack.ledger.held(id))?.confirmed).toBe(true);

    wallClock = new Date(wallClock.getTime() + HEARTBEATS_RETURN_MS);
    expect(await sut.run(NOW)).toEqual({ recordingsFailedNodeGone: 1 });
    expect((await stack.prisma.recording.findUnique({ where: { id } }))?.status).toBe('failed');
  });

  it('treats a node whose heartbeat it cannot parse as alive', async () => {
    await stack.connection.set(
      'tally:{nodes}:hb:dep-other-version',
      JSON.stringify({ nodeId: 'dep-other-version', shape: 'new' }),
      'EX',
      60,
    );
    await stack.connection.sadd('tally:{nodes}:index', 'dep-other-version');
    const id = await recordingOn('dep-other-version');

    await sut.run(NOW);

    expect((await stack.prisma.recording.findUnique({ where: { id } }))?.status).toBe('active');
  });
});
