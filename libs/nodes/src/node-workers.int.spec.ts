import type { WorkerList } from '@tally/contracts';
import { startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeWorkers, WORKER_KEYS } from './node-workers.js';

const report = (nodeId: string): WorkerList => ({
  nodeId,
  runtime: 'native',
  items: [],
  exits: {},
  reportedAt: '2025-01-01T00:00:05.000Z',
});

describe(NodeWorkers.name, () => {
  let redis: TestRedis;
  let client: Redis;
  let sut: NodeWorkers;

  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    sut = new NodeWorkers(client);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it("reads back a node's own report", async () => {
    await sut.report(report('w-own'), 30);

    expect(await sut.list('w-own')).toEqual(report('w-own'));
  });

  it("reads a report on the node's key that names another node, or is not JSON, as no report", async () => {
    // What a node's Redis user can write: its own key, with anything in it.
    await client.set(WORKER_KEYS.list('w-forger'), JSON.stringify(report('w-victim')));
    await client.set(WORKER_KEYS.list('w-garbled'), '{not json');

    expect(await sut.list('w-forger')).toBeUndefined();
    expect(await sut.list('w-garbled')).toBeUndefined();
  });
});
