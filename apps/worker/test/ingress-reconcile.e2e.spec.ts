import type { ChildProcess } from 'node:child_process';
import type { INestApplicationContext } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import type { CreatedIngress, IngressView } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { LivekitIngressClient } from '@tally/livekit';
import { NodeWorkers } from '@tally/nodes';
import { type ApiClient, pushRtmp, stopPush, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { startWorker } from '../src/bootstrap.js';

/** Sweeps run only when asked for through POST /v1/reconcile; LiveKit is changed behind Tally's back. */
describe('ingresses reconciled with the ingresses LiveKit lists', () => {
  let harness: ApiHarness;
  let worker: INestApplicationContext;
  let prisma: PrismaClient;
  let redis: Redis;
  let ledger: CapacityLedger;
  let workers: NodeWorkers;
  let livekit: LivekitIngressClient;
  const pushes: ChildProcess[] = [];

  beforeAll(async () => {
    harness = await startApiHarness({ TALLY_SWEEP_INTERVAL_S: '3600' }, { ingress: true });
    worker = await startWorker(harness.stack.config, { logger: false });
    prisma = createPrismaClient(harness.stack.config.databaseUrl);
    redis = new Redis(harness.stack.redis.url);
    ledger = new CapacityLedger(redis);
    workers = new NodeWorkers(redis);
    const { url, apiKey, apiSecret } = harness.stack.livekit;
    livekit = new LivekitIngressClient({ url, apiKey, apiSecret });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(pushes.map((p) => stopPush(p)));
    redis?.disconnect();
    await prisma?.$disconnect();
    await worker?.close();
    await harness?.stop();
  });

  async function ingressFor(name: string): Promise<{ client: ApiClient; appId: string; ingress: CreatedIngress }> {
    const { app, client } = await createTenant(harness.admin, name);
    const stream = await createStream(client, app.id, name);
    const created = await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' });
    expect(created.status).toBe(201);
    return { client, appId: app.id, ingress: created.body };
  }

  /** Asks for a sweep every couple of seconds until the check passes. */
  async function sweptUntil<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
    let askedAt = 0;
    return waitFor(
      what,
      async () => {
        if (Date.now() - askedAt > 2_000) {
          askedAt = Date.now();
          expect((await harness.admin.post('/v1/reconcile')).status).toBe(202);
        }
        return check();
      },
      60_000,
    );
  }

  it('ends an ingress LiveKit no longer knows, giving back its reservation and its hold on the ingress worker', async () => {
    const { client, appId, ingress } = await ingressFor('vanished');
    const row = await prisma.ingress.findUniqueOrThrow({ where: { id: ingress.id } });
    expect(await ledger.held(ingress.id)).toBeDefined();
    const retainedBefore = await workers.retained(row.nodeId, 'ingress');

    await livekit.delete(row.livekitIngressId);

    const ended = await sweptUntil('the ingress to end', async () => {
      const view = (await client.get<IngressView>(`/v1/apps/${appId}/ingresses/${ingress.id}`)).body;
      return view.status === 'ended' ? view : undefined;
    });
    expect(ended.status).toBe('ended');
    expect(await ledger.held(ingress.id)).toBeUndefined();
    expect(await workers.retained(row.nodeId, 'ingress')).toBe(retainedBefore - 1);
  });

  it('gives a publishing ingress whose reservation is missing its reservation back', async () => {
    const { client, appId, ingress } = await ingressFor('restored');
    pushes.push(pushRtmp(`${ingress.url}/${ingress.streamKey}`, 120));
    await waitFor(
      'ingress_started to mark the ingress publishing',
      async () =>
        (await client.get<IngressView>(`/v1/apps/${appId}/ingresses/${ingress.id}`)).body.status === 'publishing' ? true : undefined,
      60_000,
    );
    expect(await ledger.release(ingress.id)).toBe(true);

    const held = await sweptUntil('the reservation to be restored', () => ledger.held(ingress.id));

    expect(held.confirmed).toBe(true);
    expect((await client.get<IngressView>(`/v1/apps/${appId}/ingresses/${ingress.id}`)).body.status).toBe('publishing');
  });
});
