import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppView, WebhookDeliveryList, WebhookDeliveryView, WebhookEndpointView, WebhookSecretView } from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { type ApiClient, type Child, startAppProcess, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

const DAY_MS = 86_400_000;
/** Every attempt fails for this long, then the endpoint is disabled (TALLY_WEBHOOK_DISABLE_AFTER_DAYS). */
const DISABLE_AFTER_MS = 2_000;

/** Receivers whose answer each test sets per path; counts the requests of each. */
class Answering {
  readonly answers = new Map<string, number>();
  readonly hits = new Map<string, number>();
  private readonly server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const path = request.url ?? '/';
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      response.writeHead(this.answers.get(path) ?? 404).end();
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  url(path: string, status: number): string {
    this.answers.set(path, status);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('webhook endpoint health and retention', () => {
  let sut: ApiHarness;
  let worker: Child | undefined;
  const receiver = new Answering();

  const subscribed = async (name: string, status: number) => {
    const tenant = await createTenant(sut.admin, name);
    await tenant.client.post<WebhookSecretView>(`/v1/apps/${tenant.app.id}/webhook-secret`);
    const url = receiver.url(`/${name}`, status);
    expect((await tenant.client.patch<AppView>(`/v1/apps/${tenant.app.id}`, { webhookUrl: url })).status).toBe(200);
    return { ...tenant, path: `/${name}` };
  };
  const endStream = async (client: ApiClient, appId: string) => {
    const stream = await createStream(client, appId, 'brief');
    expect((await client.delete(`/v1/apps/${appId}/streams/${stream.id}`)).status).toBe(200);
  };
  const endpoint = async (client: ApiClient, appId: string) =>
    (await client.get<WebhookEndpointView>(`/v1/apps/${appId}/webhook-endpoint`)).body;
  const log = async (client: ApiClient, appId: string) =>
    (await client.get<WebhookDeliveryList>(`/v1/apps/${appId}/webhook-deliveries`)).body.items;
  const settled = (client: ApiClient, appId: string, count: number) =>
    waitFor(`${count} settled deliveries`, async () => {
      const items = await log(client, appId);
      return items.length >= count && items.every((d) => d.status !== 'pending') ? items : undefined;
    });

  beforeAll(async () => {
    sut = await startApiHarness();
    await receiver.start();
    worker = await startAppProcess(
      'worker',
      {
        ...sut.stack.env,
        TALLY_WEBHOOK_RETRY_SCHEDULE: Array<string>(30).fill('250ms').join(','),
        TALLY_WEBHOOK_DISABLE_AFTER_DAYS: String(DISABLE_AFTER_MS / DAY_MS),
        TALLY_EVENT_RETENTION_DAYS: '1',
        TALLY_SWEEP_INTERVAL_S: '1',
      },
      join(tmpdir(), `tally-health-worker-${Date.now()}.log`),
    );
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver.stop();
    await sut?.stop();
  });

  it('disables the endpoint at once on 410 Gone; nothing more is sent until the app re-enables it', async () => {
    const { app, client, path } = await subscribed('gone', 410);
    await endStream(client, app.id);

    const [gone] = await settled(client, app.id, 1);
    expect(gone).toMatchObject({ status: 'dead', attempts: 1, lastStatusCode: 410, lastError: 'HTTP 410' });
    expect(await endpoint(client, app.id)).toMatchObject({ status: 'disabled', disabledReason: 'gone' });

    await endStream(client, app.id);
    const [skipped] = await settled(client, app.id, 2);
    expect(skipped).toMatchObject({ status: 'dead', attempts: 0, lastError: 'endpoint disabled' });
    expect(receiver.hits.get(path)).toBe(1);

    receiver.answers.set(path, 204);
    const enabled = await client.post<WebhookEndpointView>(`/v1/apps/${app.id}/webhook-endpoint/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'enabled', disabledAt: null, disabledReason: null, failingSince: null });
    expect((await client.post<WebhookDeliveryView>(`/v1/apps/${app.id}/webhook-deliveries/${skipped!.id}/redeliver`)).status).toBe(202);
    const items = await waitFor('the redelivery delivered', async () => {
      const all = await log(client, app.id);
      return all.some((d) => d.status === 'delivered') ? all : undefined;
    });
    expect(items[0]).toMatchObject({ eventId: skipped!.eventId, status: 'delivered', lastStatusCode: 204 });
  });

  it('disables an endpoint that failed every attempt for the configured time, and shows since when', async () => {
    const { app, client } = await subscribed('failing', 503);
    await endStream(client, app.id);

    const failing = await waitFor('failingSince', async () => {
      const e = await endpoint(client, app.id);
      return e.failingSince !== null ? e : undefined;
    });
    expect(failing.status).toBe('enabled');
    const disabled = await waitFor('the endpoint disabled', async () => {
      const e = await endpoint(client, app.id);
      return e.status === 'disabled' ? e : undefined;
    });
    expect(disabled).toMatchObject({ disabledReason: 'failing', failingSince: failing.failingSince });
    expect(Date.parse(disabled.disabledAt!) - Date.parse(disabled.failingSince!)).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);
    const [dead] = await settled(client, app.id, 1);
    expect(dead).toMatchObject({ status: 'dead', lastStatusCode: 503, lastError: 'HTTP 503' });
    expect(dead!.attempts).toBeGreaterThan(2);

    // A new URL starts healthy.
    expect((await client.patch(`/v1/apps/${app.id}`, { webhookUrl: receiver.url('/failing-fixed', 200) })).status).toBe(200);
    expect(await endpoint(client, app.id)).toMatchObject({ status: 'enabled', failingSince: null });
  });

  it('a success ends a run of failures', async () => {
    const { app, client, path } = await subscribed('recovering', 500);
    await endStream(client, app.id);
    await waitFor('failingSince', async () => ((await endpoint(client, app.id)).failingSince !== null ? true : undefined));

    receiver.answers.set(path, 200);
    const [delivered] = await settled(client, app.id, 1);
    expect(delivered!.status).toBe('delivered');
    expect(await endpoint(client, app.id)).toMatchObject({ status: 'enabled', failingSince: null });
  });

  it('prunes settled webhook events and applied LiveKit events older than TALLY_EVENT_RETENTION_DAYS', async () => {
    const { app } = await createTenant(sut.admin, 'retention');
    const prisma = createPrismaClient(sut.stack.config.databaseUrl);
    try {
      const old = new Date(Date.now() - 2 * DAY_MS);
      const event = (id: string, createdAt: Date) => ({ id, appId: app.id, type: 'stream.ended', payload: {}, createdAt });
      const delivery = (id: string, eventId: string, status: 'delivered' | 'dead' | 'pending', createdAt: Date) => ({
        id,
        appId: app.id,
        eventId,
        url: 'https://hooks.example.com/x',
        status,
        createdAt,
        // The pending one is not due: only retention may touch it, and must not.
        nextAttemptAt: status === 'pending' ? new Date(Date.now() + DAY_MS) : null,
      });
      const suffix = app.id.slice(-8);
      await prisma.webhookEvent.createMany({
        data: [
          event(`evt_olddelivered${suffix}`, old),
          event(`evt_olddeadxxxxx${suffix}`, old),
          event(`evt_oldpendingxx${suffix}`, old),
          event(`evt_recentxxxxxx${suffix}`, new Date()),
        ],
      });
      await prisma.webhookDelivery.createMany({
        data: [
          delivery(`dlv_olddelivered${suffix}`, `evt_olddelivered${suffix}`, 'delivered', old),
          delivery(`dlv_olddeadxxxxx${suffix}`, `evt_olddeadxxxxx${suffix}`, 'dead', old),
          delivery(`dlv_oldpendingxx${suffix}`, `evt_oldpendingxx${suffix}`, 'pending', old),
          delivery(`dlv_recentxxxxxx${suffix}`, `evt_recentxxxxxx${suffix}`, 'delivered', new Date()),
        ],
      });
      await prisma.livekitEvent.createMany({
        data: [
          { id: `lk-old-${suffix}`, event: 'room_finished', receivedAt: old },
          { id: `lk-new-${suffix}`, event: 'room_finished', receivedAt: new Date() },
        ],
      });

      // The prune runs on the maintenance queue after the sweep of the same interval, one job at a
      // time: on a loaded host each sweep can take seconds.
      await waitFor(
        'old settled events pruned',
        async () => ((await prisma.webhookEvent.count({ where: { appId: app.id } })) === 2 ? true : undefined),
        90_000,
      );
      const kept = await prisma.webhookEvent.findMany({ where: { appId: app.id }, orderBy: { id: 'asc' } });
      expect(kept.map((e) => e.id)).toEqual([`evt_oldpendingxx${suffix}`, `evt_recentxxxxxx${suffix}`]);
      expect(await prisma.webhookDelivery.count({ where: { appId: app.id } })).toBe(2);
      await waitFor('the old LiveKit event pruned', async () =>
        (await prisma.livekitEvent.count({ where: { id: `lk-old-${suffix}` } })) === 0 ? true : undefined,
      );
      expect(await prisma.livekitEvent.count({ where: { id: `lk-new-${suffix}` } })).toBe(1);
    } finally {
      await prisma.$disconnect();
    }
  });
});
