import type { NodeHeartbeat } from '@tally/contracts';
import { startRedis, waitFor, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_KEYS, NodeRegistry } from './node-registry.js';

const heartbeat = (nodeId: string, over: Partial<NodeHeartbeat> = {}): NodeHeartbeat => ({
  nodeId,
  role: 'worker',
  budget: { cpuMillicores: 16_000, ramMb: 32_000, nicMbps: 10_000, gpus: [{ name: 'NVIDIA L4', nvencSessions: 32 }] },
  used: { cpuMillicores: 1_200, ramMb: 3_000 },
  labels: { zone: 'eu-west' },
  version: '0.1.0',
  startedAt: '2025-01-01T00:00:00.000Z',
  sentAt: '2025-01-01T00:00:05.000Z',
  ...over,
});

describe(NodeRegistry.name, () => {
  let redis: TestRedis;
  let client: Redis;
  const malformed: string[] = [];
  let sut: NodeRegistry;

  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    sut = new NodeRegistry(client, { onMalformed: (nodeId) => malformed.push(nodeId) });
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('lists a node that heartbeats, with the active status by default', async () => {
    await sut.heartbeat(heartbeat('reg-a'), 30);

    expect(await sut.get('reg-a')).toEqual({ ...heartbeat('reg-a'), status: 'active' });
    expect((await sut.list()).map((n) => n.nodeId)).toContain('reg-a');
    expect(await client.ttl(NODE_KEYS.heartbeat('reg-a'))).toBeGreaterThan(0);
  });

  it('drops a node whose heartbeat expired, from the list and from the index', async () => {
    await sut.heartbeat(heartbeat('reg-expiring'), 1);

    await waitFor(
      'the heartbeat to expire',
      async () => ((await sut.list()).some((n) => n.nodeId === 'reg-expiring') ? undefined : true),
      10_000,
    );

    expect(await sut.get('reg-expiring')).toBeUndefined();
    expect(await client.sismember(NODE_KEYS.index, 'reg-expiring')).toBe(0);
  });

  it('drops a node that left (its heartbeat deleted) at once, and the next listing drops its index member', async () => {
    await sut.heartbeat(heartbeat('reg-leaving'), 30);
    await sut.leave('reg-leaving');

    expect((await sut.list()).some((n) => n.nodeId === 'reg-leaving')).toBe(false);
    expect(await client.sismember(NODE_KEYS.index, 'reg-leaving')).toBe(0);
  });

  it('keeps an operator status across the node leaving and coming back, until set active', async () => {
    await sut.heartbeat(heartbeat('reg-disable'), 30);
    await sut.setStatus('reg-disable', 'disabled');
    await sut.remove('reg-disable');

    expect(await sut.get('reg-disable')).toBeUndefined();
    await sut.heartbeat(heartbeat('reg-disable'), 30);
    expect((await sut.get('reg-disable'))?.status).toBe('disabled');

    await sut.setStatus('reg-disable', 'active');
    expect((await sut.list()).find((n) => n.nodeId === 'reg-disable')?.status).toBe('active');
  });

  it('refuses to store a heartbeat that breaks the schema', async () => {
    await expect(sut.heartbeat(heartbeat('bad id'), 30)).rejects.toThrow();
    await expect(sut.heartbeat(heartbeat('reg-neg', { used: { cpuMillicores: -1, ramMb: 0 } }), 30)).rejects.toThrow();
    expect(await client.sismember(NODE_KEYS.index, 'bad id')).toBe(0);
  });

  it('skips and reports a stored heartbeat that fails the schema, and get() refuses it', async () => {
    await sut.heartbeat(heartbeat('reg-good'), 30);
    await client
      .multi()
      .set(NODE_KEYS.heartbeat('reg-garbled'), '{"nodeId":"reg-garbled"}', 'EX', 30)
      .sadd(NODE_KEYS.index, 'reg-garbled')
      .exec();

    const listed = await sut.list();

    expect(listed.map((n) => n.nodeId)).toContain('reg-good');
    expect(listed.map((n) => n.nodeId)).not.toContain('reg-garbled');
    expect(malformed).toContain('reg-garbled');
    await expect(sut.get('reg-garbled')).rejects.toThrow(/malformed/);
  });

  it("never takes a node's heartbeat for another node's: one naming another node is skipped and reported", async () => {
    await sut.heartbeat(heartbeat('reg-victim', { budget: { cpuMillicores: 8_000, ramMb: 16_000, nicMbps: 1_000, gpus: [] } }), 30);
    // What a node's own Redis user can write: its own key, saying it is the victim, with no budget.
    const forged = heartbeat('reg-victim', { budget: { cpuMillicores: 0, ramMb: 0, nicMbps: 0, gpus: [] } });
    await client
      .multi()
      .set(NODE_KEYS.heartbeat('reg-forger'), JSON.stringify(forged), 'EX', 30)
      .sadd(NODE_KEYS.index, 'reg-forger')
      .exec();

    const victims = (await sut.list()).filter((n) => n.nodeId === 'reg-victim');

    expect(victims.map((n) => n.budget.cpuMillicores)).toEqual([8_000]);
    expect(malformed).toContain('reg-forger');
    await expect(sut.get('reg-forger')).rejects.toThrow(/names node reg-victim/);
  });
});
