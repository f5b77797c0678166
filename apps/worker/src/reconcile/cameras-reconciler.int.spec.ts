import { randomBytes } from 'node:crypto';
import { Admitter, CapacityLedger, cameraUnitCost, loadCapacityModel } from '@tally/admission';
import type { NodeHeartbeat } from '@tally/contracts';
import { PrismaService } from '@tally/db';
import { NodeRegistry, schedulableBudgets, toNodeBudget } from '@tally/nodes';
import { AppPoliciesRepository } from '@tally/runtime';
import { CameraLifecycle } from '@tally/streams';
import { createTestDatabase, startRedis, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REPAIRS_KEY, RepairCounter } from '../jobs/repair-counter.js';
import { CamerasReconciler } from './cameras-reconciler.service.js';
import { ReconcileRepository } from './reconcile.repository.js';

const NODE_A = 'cam-origin-a';
const NODE_B = 'cam-origin-b';
/** QVGA 8 fps at 8 KiB, product.md's camera. */
const CAPS = { maxFps: 8, maxFrameKb: 8 };
/** How long the API gives a create to confirm its reservation (cameras.service.ts). */
const CREATE_LAPSE_MS = 60_000;

const heartbeat = (nodeId: string): NodeHeartbeat => ({
  nodeId,
  role: 'origin',
  budget: { cpuMillicores: 8_000, ramMb: 8_192, nicMbps: 1_000, gpus: [] },
  used: { cpuMillicores: 0, ramMb: 0 },
  labels: {},
  version: '0.1.0',
  startedAt: new Date().toISOString(),
  sentAt: new Date().toISOString(),
});

describe(CamerasReconciler.name, () => {
  let prisma: PrismaService;
  let redis: TestRedis;
  let connection: Redis;
  let ledger: CapacityLedger;
  let admitter: Admitter;
  let counter: RepairCounter;
  let sut: CamerasReconciler;
  /** The ledger's clock: moved forward to let a pending reservation lapse. */
  let nowMs = Date.now();
  const now = () => new Date(nowMs);

  beforeAll(async () => {
    prisma = new PrismaService(await createTestDatabase(inject('postgresUrl')));
    redis = await startRedis();
    connection = new Redis(redis.url);
    ledger = new CapacityLedger(connection, () => nowMs);
    const registry = new NodeRegistry(connection);
    const repository = new ReconcileRepository(prisma);
    const policies = new AppPoliciesRepository(prisma);
    admitter = new Admitter(
      ledger,
      {
        liveNodes: async () => (await registry.list()).map(toNodeBudget),
        schedulableNodes: async () => schedulableBudgets(await registry.list()),
        appPolicy: (appId) => policies.one(appId),
        appPolicies: () => policies.all(),
      },
      loadCapacityModel(undefined),
    );
    counter = new RepairCounter(connection);
    sut = new CamerasReconciler(repository, ledger, new CameraLifecycle(prisma, ledger, admitter));
    await registry.heartbeat(heartbeat(NODE_A), 600);
    await registry.heartbeat(heartbeat(NODE_B), 600);
  });

  afterAll(async () => {
    connection?.disconnect();
    await redis?.stop();
    await prisma?.$disconnect();
  });

  async function newApp(): Promise<string> {
    const id = `app_${randomBytes(8).toString('hex')}`;
    await prisma.app.create({ data: { id, name: id } });
    return id;
  }

  /** CamerasService.create up to `stage`: admitted (pending), then the row written, then confirmed. */
  async function createCamera(appId: string, stage: 'admitted' | 'written' | 'confirmed', nodeId?: string): Promise<string> {
    const id = `cam_${randomBytes(8).toString('hex')}`;
    const unitCost = cameraUnitCost(admitter.model, 'camera.mjpeg', CAPS);
    const admitted = await admitter.admit(id, appId, 'camera.mjpeg', 1, CREATE_LAPSE_MS, { unitCost, ...(nodeId ? { nodeId } : {}) });
    if (!admitted.ok) throw new Error(`camera not admitted: ${JSON.stringify(admitted.refusal)}`);
    if (stage === 'admitted') return id;
    await prisma.camera.create({
      data: { id, appId, name: 'door', ...CAPS, keyHash: randomBytes(32).toString('hex'), nodeId: admitted.nodeId },
    });
    if (stage === 'confirmed') expect(await ledger.confirm(id)).toBe(true);
    return id;
  }

  /** What GET /v1/apps/{id}/usage and GET /v1/capacity show: the app's cameras and each node's NIC. */
  async function usage(appId: string): Promise<{ cameras: number; nicKbps: Record<string, number> }> {
    const counters = await ledger.usage([NODE_A, NODE_B], [appId]);
    return {
      cameras: counters.apps[appId]?.['cameras'] ?? 0,
      nicKbps: { [NODE_A]: counters.nodes[NODE_A]!.load.nicKbps, [NODE_B]: counters.nodes[NODE_B]!.load.nicKbps },
    };
  }

  const repairsCounted = async (kind: string) => Number((await connection.hget(REPAIRS_KEY, `cameras.${kind}`)) ?? 0);

  /** One sweep as the maintenance runner does it: the reconciler, then its repairs into the metric's hash. */
  async function sweep() {
    const report = await sut.run(now());
    await counter.add({ cameras: report });
    return report;
  }

  it('gives back the place of a camera deleted by a process that died before releasing it', async () => {
    const appId = await newApp();
    const before = await usage(appId);
    const id = await createCamera(appId, 'confirmed');
    expect((await usage(appId)).cameras).toBe(1);
    // The delete's first step, then SIGKILL: the row is deleted, the confirmed reservation still held.
    await prisma.camera.update({ where: { id }, data: { deletedAt: new Date(nowMs - 60_000) } });
    const counted = await repairsCounted('reservationsFreed');

    expect(await sweep()).toEqual({ reservationsFreed: 1, reservationsRestored: 0 });

    expect(await usage(appId)).toEqual(before);
    expect(await ledger.held(id)).toBeUndefined();
    expect(await repairsCounted('reservationsFreed')).toBe(counted + 1);
    expect(await sweep()).toEqual({ reservationsFreed: 0, reservationsRestored: 0 });
  });

  it('gives back the place of a camera whose row is gone altogether', async () => {
    const appId = await newApp();
    const before = await usage(appId);
    const id = await createCamera(appId, 'confirmed');
    await prisma.camera.delete({ where: { id } });

    expect(await sweep()).toEqual({ reservationsFreed: 1, reservationsRestored: 0 });
    expect(await usage(appId)).toEqual(before);
  });

  it('gives a camera whose create died before confirming its place back, on its own node and at its own cost', async () => {
    const appId = await newApp();
    // The other node is emptier, so a placement that ignored the camera's node would pick it.
    await createCamera(await newApp(), 'confirmed', NODE_A);
    const before = await usage(appId);
    const id = await createCamera(appId, 'written', NODE_A);
    const during = await usage(appId);
    nowMs += CREATE_LAPSE_MS + 1_000;
    expect(await usage(appId)).toEqual(before);
    const counted = await repairsCounted('reservationsRestored');

    expect(await sweep()).toEqual({ reservationsFreed: 0, reservationsRestored: 1 });

    expect(await usage(appId)).toEqual(during);
    expect(await ledger.held(id)).toMatchObject({ nodeId: NODE_A, kind: 'camera.mjpeg', confirmed: true });
    expect(await repairsCounted('reservationsRestored')).toBe(counted + 1);
    expect(await sweep()).toEqual({ reservationsFreed: 0, reservationsRestored: 0 });
    expect(await usage(appId)).toEqual(during);
  });

  it('leaves a healthy camera, a camera being created and a camera being deleted alone', async () => {
    const appId = await newApp();
    const healthy = await createCamera(appId, 'confirmed');
    const admittedOnly = await createCamera(appId, 'admitted');
    const rowWritten = await createCamera(appId, 'written');
    const deleting = await createCamera(appId, 'confirmed');
    await prisma.camera.update({ where: { id: deleting }, data: { deletedAt: now() } });
    const before = await usage(appId);
    expect(before.cameras).toBe(4);

    expect(await sweep()).toEqual({ reservationsFreed: 0, reservationsRestored: 0 });

    expect(await usage(appId)).toEqual(before);
    expect((await ledger.held(healthy))?.confirmed).toBe(true);
    expect((await ledger.held(admittedOnly))?.confirmed).toBe(false);
    expect((await ledger.held(rowWritten))?.confirmed).toBe(false);
    // The create finishes as the API does it, on the one reservation it took.
    expect(await ledger.confirm(rowWritten)).toBe(true);
    expect(await usage(appId)).toEqual(before);
  });
});
