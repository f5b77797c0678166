import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppView, LimitRefusal, StreamView, WebhookDeliveryList, WebhookDeliveryView, WebhookSecretView } from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { type ApiClient, type Child, startAppProcess, waitFor } from '@tally/testing';
import { DeliveryWake, type StagedEvent, WebhookOutbox } from '@tally/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { SignedReceiver } from './signed-receiver.js';

const APP_CONCURRENCY = 4;
const BACKLOG = 1_000;

/** A receiver that accepts connections, reads the requests and never answers. */
class BlackHole {
  readonly sockets: Socket[] = [];
  private readonly server: Server = createServer((socket) => {
    this.sockets.push(socket);
    socket.resume();
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  open(): number {
    return this.sockets.filter((s) => !s.destroyed).length;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('webhook delivery between apps', () => {
  let sut: ApiHarness;
  let worker: Child | undefined;
  const hole = new BlackHole();
  let receiver: SignedReceiver;

  const subscribe = async (client: ApiClient, appId: string, url: string): Promise<string> => {
    const secret = (await client.post<WebhookSecretView>(`/v1/apps/${appId}/webhook-secret`)).body.secret;
    expect((await client.patch<AppView>(`/v1/apps/${appId}`, { webhookUrl: url })).status).toBe(200);
    return secret;
  };
  const deliveries = async (client: ApiClient, appId: string, query = ''): Promise<WebhookDeliveryView[]> =>
    (await client.get<WebhookDeliveryList>(`/v1/apps/${appId}/webhook-deliveries${query}`)).body.items;

  beforeAll(async () => {
    sut = await startApiHarness({ TALLY_WEBHOOK_APP_CONCURRENCY: String(APP_CONCURRENCY), TALLY_WEBHOOK_REDELIVER_PER_MINUTE: '3' });
    receiver = await SignedReceiver.start();
    worker = await startAppProcess('worker', sut.stack.env, join(tmpdir(), `tally-fairness-worker-${Date.now()}.log`));
  });
  afterAll(async () => {
    await worker?.stop();
    await hole.stop();
    await receiver?.stop();
    await sut?.stop();
  });

  it("delivers another app's new event within 2 s while one app's receiver hangs with 1,000 deliveries pending", async () => {
    const stalled = await createTenant(sut.admin, 'stalled');
    await subscribe(stalled.client, stalled.app.id, await hole.start());
    const prisma = createPrismaClient(sut.stack.config.databaseUrl);
    const wake = new DeliveryWake(sut.stack.config.redisUrl);
    try {
      // The backlog goes through the real outbox, in the transactions a burst of state changes would use.
      const outbox = new WebhookOutbox(wake);
      const stream = await createStream(stalled.client, stalled.app.id, 'busy');
      for (let batch = 0; batch < BACKLOG / 50; batch += 1) {
        const staged = await prisma.$transaction(
          async (tx) => {
            const out: (StagedEvent | undefined)[] = [];
            for (let i = 0; i < 50; i += 1) out.push(await outbox.stage(tx, stalled.app.id, 'stream.live', { ...stream, status: 'live' }));
            return out;
          },
          { timeout: 60_000 },
        );
        await outbox.flush(staged);
      }
    } finally {
      await wake.close();
      await prisma.$disconnect();
    }
    await waitFor(`${APP_CONCURRENCY} hanging attempts`, () => Promise.resolve(hole.open() >= APP_CONCURRENCY ? true : undefined), 30_000);

    const healthy = await createTenant(sut.admin, 'healthy');
    receiver.secret = await subscribe(healthy.client, healthy.app.id, receiver.url);
    const stream = await createStream(healthy.client, healthy.app.id, 'prompt');
    expect((await healthy.client.delete<StreamView>(`/v1/apps/${healthy.app.id}/streams/${stream.id}`)).status).toBe(200);

    // The outcome, not a benchmark: with one shared queue this event waited behind the 1,000.
    const got = await waitFor('the healthy app’s event', () => Promise.resolve(receiver.of('stream.ended', stream.id)[0]), 2_000);
    expect(got.signatureValid).toBe(true);
    // The hanging receiver holds only its own app's slots, and its deliveries wait, none lost.
    expect(hole.open()).toBeLessThanOrEqual(APP_CONCURRENCY);
    const stalledLog = await deliveries(stalled.client, stalled.app.id, '?limit=500');
    expect(stalledLog.every((d) => d.status === 'pending')).toBe(true);
  });

  it('limits redeliveries per app: the fourth in a minute answers 429 naming the resource, other apps are unaffected', async () => {
    const owner = await createTenant(sut.admin, 'redeliverer');
    receiver.secret = await subscribe(owner.client, owner.app.id, receiver.url);
    const stream = await createStream(owner.client, owner.app.id, 'again');
    await owner.client.delete(`/v1/apps/${owner.app.id}/streams/${stream.id}`);
    const [delivery] = await waitFor('the first delivery', async () => {
      const items = await deliveries(owner.client, owner.app.id);
      return items[0]?.status === 'delivered' ? items : undefined;
    });
    const redeliver = (client: ApiClient, appId: string, id: string) =>
      client.post<WebhookDeliveryView | LimitRefusal>(`/v1/apps/${appId}/webhook-deliveries/${id}/redeliver`);

    for (let i = 0; i < 3; i += 1) expect((await redeliver(owner.client, owner.app.id, delivery!.id)).status).toBe(202);
    const refused = await redeliver(owner.client, owner.app.id, delivery!.id);
    expect(refused.status).toBe(429);
    expect((refused.body as LimitRefusal).error).toMatchObject({ code: 'quota_exceeded', resource: 'app.webhook_redeliveries', limit: 3 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    const other = await createTenant(sut.admin, 'neighbour');
    await subscribe(other.client, other.app.id, receiver.url);
    const theirs = await createStream(other.client, other.app.id, 'theirs');
    await other.client.delete(`/v1/apps/${other.app.id}/streams/${theirs.id}`);
    const their = await waitFor('their delivery', async () => (await deliveries(other.client, other.app.id))[0]);
    expect((await redeliver(other.client, other.app.id, their.id)).status).toBe(202);
  });
});
