import type { ChildProcess } from 'node:child_process';
import { CapacityLedger } from '@tally/admission';
import type { AppUsageView, CreatedIngress, IngressView, WebhookDeliveryList } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { pushRtmp, stopPush, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

describe('an ingress pushed to again after its reservation lapsed', () => {
  let sut: ApiHarness;
  let prisma: PrismaClient;
  let redis: Redis;
  const pushes: ChildProcess[] = [];

  beforeAll(async () => {
    sut = await startApiHarness({}, { ingress: true });
    prisma = createPrismaClient(sut.stack.config.databaseUrl);
    redis = new Redis(sut.stack.redis.url);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(pushes.map((p) => stopPush(p)));
    redis?.disconnect();
    await prisma?.$disconnect();
    await sut?.stop();
  });

  it('is admitted like a new one: over the quota it is disconnected and the app is told which limit refused it', async () => {
    const { app, client } = await createTenant(sut.admin, 'lapsed');
    await sut.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxIngresses: 1 }, webhookUrl: 'http://127.0.0.1:9/hooks' });
    const stream = await createStream(client, app.id);
    const first = (await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' })).body;
    // Nobody pushed in time: its reservation lapses, and the app's one ingress slot goes to another.
    expect(await new CapacityLedger(redis).release(first.id)).toBe(true);
    const second = await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' });
    expect(second.status).toBe(201);

    pushes.push(pushRtmp(`${first.url}/${first.streamKey}`, 120));

    const refused = await waitFor(
      'the re-activated ingress to be refused',
      async () => {
        const i = (await client.get<IngressView>(`/v1/apps/${app.id}/ingresses/${first.id}`)).body;
        return i.status === 'error' ? i : undefined;
      },
      90_000,
    );
    expect(refused.error).toContain('app.ingresses');
    const usage = (await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body.items.find((i) => i.quota === 'maxIngresses');
    expect(usage).toEqual({ quota: 'maxIngresses', used: 1, limit: 1, guarantee: 0 });
    expect(await new CapacityLedger(redis).held(first.id)).toBeUndefined();
    await waitFor(
      'its publisher to be gone from the room',
      async () => {
        const participants = await new LivekitRoomClient(sut.stack.config.livekit).listParticipants(stream.room);
        return participants.some((p) => p.identity === `ingress-${first.id}`) ? undefined : true;
      },
      30_000,
    );
    const deliveries = (await client.get<WebhookDeliveryList>(`/v1/apps/${app.id}/webhook-deliveries`)).body.items;
    expect(deliveries.map((d) => d.eventType)).toContain('ingress.refused');
    const event = await prisma.webhookEvent.findFirstOrThrow({ where: { appId: app.id, type: 'ingress.refused' } });
    expect(event.payload).toMatchObject({
      type: 'ingress.refused',
      data: {
        ingress: { id: first.id, status: 'error' },
        refusal: { code: 'quota_exceeded', resource: 'app.ingresses', limit: 1, used: 1 },
      },
    });
  }, 240_000);
});
