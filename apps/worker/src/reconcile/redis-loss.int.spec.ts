import type { NodeHeartbeat } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { startRedis, type TestRedis, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisLossDetector, SWEEP_MARKER_KEY } from './redis-loss.js';

const heartbeat = (): NodeHeartbeat => ({
  nodeId: 'loss-node',
  role: 'origin',
  budget: { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] },
  used: { cpuMillicores: 0, ramMb: 0 },
  labels: {},
  version: '0.1.0',
  startedAt: new Date().toISOString(),
  sentAt: new Date().toISOString(),
});

describe(RedisLossDetector.name, () => {
  let redis: TestRedis;
  let connection: Redis;
  let registry: NodeRegistry;
  let detector: RedisLossDetector;

  beforeAll(async () => {
    redis = await startRedis();
    connection = new Redis(redis.url);
    registry = new NodeRegistry(connection);
    detector = new RedisLossDetector(connection, registry);
  });

  beforeEach(async () => {
    await connection.flushall();
    await registry.heartbeat(heartbeat(), 60);
  });

  afterAll(async () => {
    connection?.disconnect();
    await redis?.stop();
  });

  it('takes a first sweep with nothing to restore for no loss: later sweeps spare nothing', async () => {
    const first = await detector.observe(new Date(1_000));
    expect(first).toEqual({ detectedNow: true, lostAt: new Date(1_000) });

    expect(await detector.settle(first, 0)).toBe(false);

    expect(await detector.observe(new Date(2_000))).toEqual({ detectedNow: false, lostAt: undefined });
  });

  it('records a loss when the sweep had to restore something, and keeps its time for later sweeps', async () => {
    await detector.settle(await detector.observe(new Date(1_000)), 0);
    await connection.flushall();
    await registry.heartbeat(heartbeat(), 60);

    const loss = await detector.observe(new Date(5_000));
    expect(loss.detectedNow).toBe(true);
    expect(await detector.settle(loss, 3)).toBe(true);

    expect(await detector.observe(new Date(9_000))).toEqual({ detectedNow: false, lostAt: new Date(5_000) });
  });

  it('decides nothing while no node heartbeats: the next sweep notices the loss again', async () => {
    await connection.flushall();
    const loss = await detector.observe(new Date(1_000));

    expect(await detector.settle(loss, 0)).toBe(false);

    expect(await connection.exists(SWEEP_MARKER_KEY)).toBe(0);
    expect((await detector.observe(new Date(2_000))).detectedNow).toBe(true);
  });

  it('asks for a sweep once the marker is gone and a node heartbeats again', async () => {
    await detector.settle(await detector.observe(new Date(1_000)), 0);
    const asked: number[] = [];
    const stop = detector.watch(50, (at) => {
      asked.push(at);
      return Promise.resolve();
    });
    try {
      await connection.flushall();
      await registry.heartbeat(heartbeat(), 60);

      await waitFor('a sweep to be asked for', () => Promise.resolve(asked.length > 0 ? true : undefined), 5_000);

      expect(asked).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
