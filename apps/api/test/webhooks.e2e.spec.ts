import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispose } from '@livekit/rtc-node';
import {
  type AppView,
  type ErrorBody,
  type StreamToken,
  type StreamView,
  WebhookEventBody,
  type WebhookDeliveryList,
  type WebhookDeliveryView,
  type WebhookSecretView,
} from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { ApiClient, type Child, freePort, mediaNodeIp, startAppProcess, waitFor } from '@tally/testing';
import { DeliveryWake, WebhookOutbox } from '@tally/webhooks';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../src/bootstrap.js';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';

/** Small backoff so retries happen within a test. */
const WORKER_ENV = {
  TALLY_WEBHOOK_RETRY_SCHEDULE: '300ms,600ms,1s,2s',
  TALLY_WEBHOOK_TIMEOUT_MS: '5000',
  TALLY_SWEEP_INTERVAL_S: '2',
};

const ABANDONED = 0;

type Arrival = Readonly<{ route: string; event: WebhookEventBody; deliveryId: string; status: number; at: number; signatures: number }>;
type Route = { secrets: string[]; answer: (nth: number) => number; delayMs: number; count: number };

/**
 * An app's webhook endpoint, as the docs tell an app to write one: verify the Standard Webhooks
 * signature with the app's secret (the library refuses stale timestamps), then de-duplicate by event id.
 */
class Receiver {
  readonly arrivals: Arrival[] = [];
  /** Requests that broke the contract (bad body or headers); every test expects none. */
  readonly problems: string[] = [];
  inFlight = 0;
  private readonly routes = new Map<string, Route>();
  private server: Server | undefined;
  private base = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  route(name: string, secret: string, answer: (nth: number) => number = () => 200, delayMs = 0): string {
    this.routes.set(name, { secrets: [secret], answer, delayMs, count: 0 });
    return `${this.base}/hooks/${name}`;
  }

  /** The secrets the route accepts (a receiver mid-rotation may accept both). */
  setSecrets(name: string, secrets: string[]): void {
    this.routes.get(name)!.secrets = secrets;
  }

  /** Accepted (2xx) arrivals of a route, one per event id. */
  unique(route: string): Map<string, Arrival> {
    const byId = new Map<string, Arrival>();
    for (const a of this.arrivals)
      if (a.route === route && a.status >= 200 && a.status < 300 && !byId.has(a.event.id)) byId.set(a.event.id, a);
    return byId;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.inFlight += 1;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const name = /^\/hooks\/([\w-]+)$/.exec(request.url ?? '')?.[1] ?? '';
      const route = this.routes.get(name);
      if (!route) return void response.writeHead(404).end();
      if (!verify(route.secrets, request.headers, body)) {
        this.arrivals.push({
          route: name,
          event: WebhookEventBody.parse(JSON.parse(body)),
          deliveryId: '',
          status: 401,
          at: Date.now(),
          signatures: 0,
        });
        return void response.writeHead(401).end();
      }
      const event = WebhookEventBody.parse(JSON.parse(body));
      const headers = [request.headers['webhook-id'], request.headers['tally-event-type'], request.headers['user-agent']];
      if (headers.join() !== [event.id, event.type, 'Tally-Webhooks/1'].join())
        throw new Error(`headers ${headers.join()} do not match the body`);
      route.count += 1;
      const status = route.answer(route.count);
      if (route.delayMs > 0) await new Promise((r) => setTimeout(r, route.delayMs));
      // A sender that died while we waited never learns the answer: that arrival does not count as delivered.
      const answered = request.socket.destroyed ? ABANDONED : status;
      this.arrivals.push({
        route: name,
        event,
        deliveryId: String(request.headers['tally-delivery-id']),
        status: answered,
        at: Date.now(),
        signatures: String(request.headers['webhook-signature']).split(' ').length,
      });
      response.writeHead(status).end();
    } catch (error) {
      this.problems.push(String(error));
      response.writeHead(400).end();
    } finally {
      this.inFlight -= 1;
    }
  }
}

/** Verification as docs/webhooks.md shows it: the published Standard Webhooks library, nothing of Tally's. */
function verify(secrets: readonly string[], headers: IncomingHttpHeaders, body: string): boolean {
  return secrets.some((secret) => {
    try {
      new Webhook(secret).verify(body, headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  });
}

describe('outbound webhooks', () => {
  let sut: ApiHarness;
  const receiver = new Receiver();
  let worker: Child | undefined;
  let publisher: Publisher | undefined;

  const startWorker = async (env: Record<string, string> = {}) => {
    const log = join(tmpdir(), `tally-webhooks-worker-${Date.now()}.log`);
    worker = await startAppProcess('worker', { ...sut.stack.env, ...WORKER_ENV, ...env }, log);
  };

  /** A tenant whose webhooks go to a receiver route that knows its freshly rotated secret. */
  const subscribedTenant = async (route: string, answer?: (nth: number) => number, delayMs?: number) => {
    const tenant = await createTenant(sut.admin, `hooks-${route}`);
    const rotated = await tenant.client.post<WebhookSecretView>(`/v1/apps/${tenant.app.id}/webhook-secret`);
    expect(rotated.status).toBe(201);
    const url = receiver.route(route, rotated.body.secret, answer, delayMs);
    expect((await tenant.client.patch<AppView>(`/v1/apps/${tenant.app.id}`, { webhookUrl: url })).status).toBe(200);
    return { ...tenant, secret: rotated.body.secret, url };
  };

  const endNewStream = async (client: ApiClient, appId: string, name = 'short'): Promise<StreamView> => {
    const stream = await createStream(client, appId, name);
    const ended = await client.delete<StreamView>(`/v1/apps/${appId}/streams/${stream.id}`);
    expect(ended.status).toBe(200);
    return ended.body;
  };

  const deliveries = async (client: ApiClient, appId: string, query = ''): Promise<WebhookDeliveryView[]> => {
    const response = await client.get<WebhookDeliveryList>(`/v1/apps/${appId}/webhook-deliveries${query}`);
    expect(response.status).toBe(200);
    return response.body.items;
  };

  const settled = (client: ApiClient, appId: string, status: 'delivered' | 'dead', count = 1, timeoutMs = 30_000) =>
    waitFor(
      `${count} ${status} deliveries`,
      async () => {
        const items = await deliveries(client, appId);
        return items.length >= count && items.every((d) => d.status === status) ? items : undefined;
      },
      timeoutMs,
    );

  const arrived = (route: string, type: string) => Promise.resolve([...receiver.unique(route).values()].find((a) => a.event.type === type));

  beforeAll(async () => {
    mediaNodeIp();
    sut = await startApiHarness();
    await receiver.start();
    await startWorker();
  });
  afterEach(() => {
    expect(receiver.problems).toEqual([]);
  });
  afterAll(async () => {
    await publisher?.stop();
    await worker?.stop();
    await receiver.stop();
    await sut?.stop();
    await dispose();
  });

  it('lets an app key set its webhook URL and recording settings, but not its quotas or name', async () => {
    const { app, client } = await createTenant(sut.admin, 'self-service');
    const other = await createTenant(sut.admin, 'neighbour');
    const path = `/v1/apps/${app.id}`;

    const quotas = await client.patch<ErrorBody>(path, { quotas: { maxStreams: 100 } });
    expect(quotas.status).toBe(403);
    expect(quotas.body.error).toMatchObject({ code: 'forbidden', details: { fields: ['quotas'] } });
    expect(quotas.body.error.message).toContain('quotas');
    expect((await client.patch<ErrorBody>(path, { name: 'renamed' })).body.error.message).toContain('name');

    const patched = await client.patch<AppView>(path, {
      webhookUrl: 'https://hooks.example.com/tally',
      recordingMode: 'track_composite',
      recordingFallback: true,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'self-service',
      webhookUrl: 'https://hooks.example.com/tally',
      webhookSecretSet: false,
      recordingMode: 'track_composite',
      recordingFallback: true,
    });
    expect((await client.patch(path, { webhookUrl: 'ftp://hooks.example.com' })).status).toBe(400);
    expect((await other.client.patch(path, { webhookUrl: 'https://evil.example.com' })).status).toBe(404);
    expect((await client.patch<AppView>(path, { webhookUrl: null })).body.webhookUrl).toBeNull();
    expect((await sut.admin.patch<AppView>(path, { name: 'renamed by admin' })).body.name).toBe('renamed by admin');
  });

  it('shows a rotated secret once; the app view only says that one is set', async () => {
    const { app, client } = await createTenant(sut.admin, 'secretive');

    const first = await client.post<WebhookSecretView>(`/v1/apps/${app.id}/webhook-secret`);
    const second = await client.post<WebhookSecretView>(`/v1/apps/${app.id}/webhook-secret`);

    expect(first.status).toBe(201);
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Date.parse(second.body.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(second.body.secret).not.toBe(first.body.secret);
    const view = await client.get<AppView>(`/v1/apps/${app.id}`);
    expect(view.body.webhookSecretSet).toBe(true);
    expect(JSON.stringify(view.body)).not.toContain(second.body.secret.slice(6));
    expect(JSON.stringify((await sut.admin.get('/v1/apps')).body)).not.toContain(second.body.secret.slice(6));
  });

  it('delivers stream.live when a real client joins and stream.ended when the API ends it, signed, once each', async () => {
    const { app, client } = await subscribedTenant('live');
    const stream = await createStream(client, app.id, 'launch');
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' })
    ).body;

    publisher = await joinAndPublish(token.url, token.token);
    const live = await waitFor('stream.live at the receiver', () => arrived('live', 'stream.live'));
    expect(live.event).toMatchObject({ appId: app.id, data: { id: stream.id, status: 'live', room: stream.room } });
    expect((live.event.data as StreamView).participants).toBeGreaterThanOrEqual(1);

    expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBe(200);
    const ended = await waitFor('stream.ended at the receiver', () => arrived('live', 'stream.ended'));
    expect(ended.event.data).toMatchObject({ id: stream.id, status: 'ended', endReason: 'ended_by_api', participants: 0 });
    await publisher.stop();
    publisher = undefined;

    // LiveKit's room_finished and participant_left follow the API's end; neither may add an event.
    await new Promise((r) => setTimeout(r, 2_000));
    expect([...receiver.unique('live').values()].map((a) => a.event.type).sort()).toEqual(['stream.ended', 'stream.live']);
    const log = await settled(client, app.id, 'delivered', 2);
    expect(log.map((d) => d.eventType)).toEqual(['stream.ended', 'stream.live']);
    expect(log.every((d) => d.attempts === 1 && d.lastStatusCode === 200 && d.deliveredAt !== null)).toBe(true);
  });

  it('signs with both secrets for the grace period the app chose on rotation, then with the new one only', async () => {
    const { app, client, secret: first } = await subscribedTenant('rotating');
    const rotate = (gracePeriodS: number) => client.post<WebhookSecretView>(`/v1/apps/${app.id}/webhook-secret`, { gracePeriodS });

    // The receiver still holds only the first secret: deliveries verify through the grace period.
    const second = await rotate(3_600);
    expect(second.status).toBe(201);
    expect(Date.parse(second.body.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(3_500_000);
    const during = await endNewStream(client, app.id, 'during');
    const seen = await waitFor('the event signed during the grace period', () =>
      Promise.resolve([...receiver.unique('rotating').values()].find((a) => (a.event.data as StreamView).id === during.id)),
    );
    expect(seen.signatures).toBe(2);
    receiver.setSecrets('rotating', [second.body.secret]);

    // No grace: the second secret stops signing at once, so a receiver still holding it refuses.
    const third = await rotate(0);
    expect(third.body.previousSecretExpiresAt).toBeNull();
    const after = await endNewStream(client, app.id, 'after');
    await waitFor('a refused delivery signed only with the third secret', () =>
      Promise.resolve(
        receiver.arrivals.find((a) => a.route === 'rotating' && a.status === 401 && (a.event.data as StreamView).id === after.id),
      ),
    );
    receiver.setSecrets('rotating', [third.body.secret]);
    const log = await settled(client, app.id, 'delivered', 2);
    expect(log.map((d) => d.attempts)).toEqual([2, 1]);
    expect([...receiver.unique('rotating').values()].find((a) => (a.event.data as StreamView).id === after.id)?.signatures).toBe(1);
    expect(first).not.toBe(third.body.secret);
    expect((await client.post(`/v1/apps/${app.id}/webhook-secret`, { gracePeriodS: -1 })).status).toBe(400);
  });

  it('retries a failing receiver on the schedule, with jitter, and delivers on the third attempt', async () => {
    const { app, client } = await subscribedTenant('flaky', (nth) => (nth <= 2 ? 500 : 200));
    await endNewStream(client, app.id);

    const [delivery] = await settled(client, app.id, 'delivered');
    expect(delivery).toMatchObject({ eventType: 'stream.ended', attempts: 3, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
    const attempts = receiver.arrivals.filter((a) => a.route === 'flaky');
    expect(attempts.map((a) => a.status)).toEqual([500, 500, 200]);
    expect(new Set(attempts.map((a) => a.event.id)).size).toBe(1);
    expect(new Set(attempts.map((a) => a.deliveryId))).toEqual(new Set([delivery!.id]));
    // 300 ms ±20 % after the first failure, 600 ms ±20 % after the second.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(230);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(470);
  });

  it('delivers a delivery whose wake never came (a crash between commit and flush)', async () => {
    const { app, client } = await subscribedTenant('orphan');
    const stream = await createStream(client, app.id, 'orphaned');
    const prisma = createPrismaClient(sut.stack.config.databaseUrl);
    const wake = new DeliveryWake(sut.stack.config.redisUrl);
    try {
      const staged = await prisma.$transaction((tx) =>
        new WebhookOutbox(wake).stage(tx, app.id, 'stream.live', { ...stream, status: 'live' }),
      );
      expect(staged).toBeDefined();
      // No flush, so no wake: only the dispatcher's poll of due rows can find it.
      const [delivery] = await settled(client, app.id, 'delivered', 1, 30_000);
      expect(delivery!.eventId).toBe(staged!.eventId);
      expect(receiver.unique('orphan').has(staged!.eventId)).toBe(true);
    } finally {
      await wake.close();
      await prisma.$disconnect();
    }
  });

  it("answers 404 for another app's delivery log and deliveries", async () => {
    const owner = await subscribedTenant('owned');
    const stranger = await createTenant(sut.admin, 'stranger');
    await endNewStream(owner.client, owner.app.id);
    const [delivery] = await settled(owner.client, owner.app.id, 'delivered');
    const redeliver = (appId: string) => `/v1/apps/${appId}/webhook-deliveries/${delivery!.id}/redeliver`;

    expect((await stranger.client.get(`/v1/apps/${owner.app.id}/webhook-deliveries`)).status).toBe(404);
    expect((await stranger.client.post(redeliver(owner.app.id))).status).toBe(404);
    expect((await stranger.client.post(redeliver(stranger.app.id))).status).toBe(404);
    expect((await stranger.client.post(`/v1/apps/${owner.app.id}/webhook-secret`)).status).toBe(404);
    expect((await stranger.client.get(`/v1/apps/${stranger.app.id}/webhook-deliveries`)).body).toEqual({ items: [] });
    expect((await owner.client.get(`/v1/apps/${owner.app.id}/webhook-deliveries?status=bogus`)).status).toBe(400);
    expect((await owner.client.post(`/v1/apps/${owner.app.id}/webhook-deliveries/dlv_nope/redeliver`)).status).toBe(400);
  });

  it("refuses webhook URLs into the origin's own networks in every spelling, and checks again at delivery after DNS", async () => {
    // An API and a worker as installed: no TALLY_WEBHOOK_ALLOW_CIDRS.
    const port = await freePort();
    const config = sut.stack.config;
    const strictApi = await startApi(
      { ...config, http: { ...config.http, port }, webhooks: { ...config.webhooks, allowCidrs: [] } },
      { logger: false },
    );
    try {
      const { app, key } = await createTenant(sut.admin, 'ssrf');
      const client = new ApiClient(`http://127.0.0.1:${port}`).withKey(key.key);
      const refused = [
        'http://127.0.0.1:6379/',
        'http://localhost:5432/',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
        'http://172.16.0.1/',
        'http://192.168.0.1/',
        'http://100.64.0.1/',
        'http://[::1]:7880/',
        'http://[fd00::1]/',
        'http://[fe80::1]/',
        'http://[::ffff:127.0.0.1]/',
        'http://0.0.0.0/',
        'http://224.0.0.1/',
        'http://2130706433/',
        'http://017700000001/',
        'http://0x7f000001/',
        'http://0x7f.1/',
        'http://127.1/',
      ];
      for (const url of refused) {
        const answer = await client.patch<ErrorBody>(`/v1/apps/${app.id}`, { webhookUrl: url });
        expect(answer.status, url).toBe(400);
        expect(answer.body.error.message, url).toContain('webhookUrl');
        expect(answer.body.error.details, url).toMatchObject({ fields: [{ field: 'webhookUrl' }] });
      }
      expect((await client.get<AppView>(`/v1/apps/${app.id}`)).body.webhookUrl).toBeNull();
      expect((await client.patch<AppView>(`/v1/apps/${app.id}`, { webhookUrl: 'https://hooks.example.com/x' })).status).toBe(200);
    } finally {
      await strictApi.close();
    }

    // A name accepted when set (here by an API that allows loopback) is resolved and checked again at
    // each attempt: a worker without the allowance connects to nothing and says only that.
    const { app, client, url } = await subscribedTenant('rebound');
    expect((await client.patch(`/v1/apps/${app.id}`, { webhookUrl: url.replace('127.0.0.1', 'localhost') })).status).toBe(200);
    await worker?.stop();
    await startWorker({ TALLY_WEBHOOK_ALLOW_CIDRS: '', TALLY_WEBHOOK_RETRY_SCHEDULE: '300ms' });
    try {
      await endNewStream(client, app.id);
      const [dead] = await settled(client, app.id, 'dead');
      expect(dead).toMatchObject({ attempts: 2, lastStatusCode: null, lastError: 'address not allowed' });
      expect(receiver.arrivals.filter((a) => a.route === 'rebound')).toEqual([]);
    } finally {
      await worker?.stop();
      await startWorker();
    }
  });

  it('dead-letters a delivery after the last attempt; a redelivery to a fixed receiver delivers the same event', async () => {
    await worker?.stop();
    await startWorker({ TALLY_WEBHOOK_RETRY_SCHEDULE: '300ms' });
    const { app, client, secret } = await subscribedTenant('down', () => 500);
    await endNewStream(client, app.id);

    const [dead] = await settled(client, app.id, 'dead');
    expect(dead).toMatchObject({
      attempts: 2,
      lastStatusCode: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
      deliveredAt: null,
    });
    expect(await deliveries(client, app.id, '?status=dead')).toHaveLength(1);
    expect(await deliveries(client, app.id, '?status=pending')).toHaveLength(0);

    const fixed = receiver.route('fixed', secret);
    await client.patch(`/v1/apps/${app.id}`, { webhookUrl: fixed });
    const redelivered = await client.post<WebhookDeliveryView>(`/v1/apps/${app.id}/webhook-deliveries/${dead!.id}/redeliver`);

    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toMatchObject({ eventId: dead!.eventId, url: fixed, status: 'pending', attempts: 0 });
    expect(redelivered.body.id).not.toBe(dead!.id);
    const again = await waitFor('the redelivery at the fixed receiver', () => Promise.resolve(receiver.unique('fixed').get(dead!.eventId)));
    expect(again.deliveryId).toBe(redelivered.body.id);
    const log = await waitFor('the log to show both', async () => {
      const items = await deliveries(client, app.id);
      return items.some((d) => d.status === 'delivered') ? items : undefined;
    });
    expect(log.map((d) => [d.id, d.status])).toEqual([
      [redelivered.body.id, 'delivered'],
      [dead!.id, 'dead'],
    ]);
  });

  it('loses no event when the worker is killed with SIGKILL mid-delivery', { timeout: 180_000 }, async () => {
    await worker?.stop();
    await startWorker();
    const { app, client } = await subscribedTenant('slow', () => 200, 1_500);
    const total = 24;

    for (let i = 0; i < total / 2; i += 1) await endNewStream(client, app.id, `before-${i}`);
    await waitFor('deliveries in flight at the receiver', () => Promise.resolve(receiver.inFlight >= 4 ? true : undefined), 30_000);
    const inFlightAtKill = receiver.inFlight;
    await worker!.stop('SIGKILL');

    // Events keep happening while no worker runs; they wait in the outbox.
    for (let i = 0; i < total / 2; i += 1) await endNewStream(client, app.id, `after-${i}`);
    await startWorker();

    const expected = new Set((await deliveries(client, app.id)).map((d) => d.eventId));
    expect(expected.size).toBe(total);
    const log = await settled(client, app.id, 'delivered', total, 120_000);
    const received = receiver.unique('slow');
    const missing = [...expected].filter((id) => !received.has(id));
    expect(missing).toEqual([]);
    expect(log).toHaveLength(total);
    // What was in flight when the worker died was sent again by the next one: duplicates, never gaps.
    const sends = receiver.arrivals.filter((a) => a.route === 'slow').length;
    expect(inFlightAtKill).toBeGreaterThanOrEqual(4);
    expect(sends).toBeGreaterThanOrEqual(total + inFlightAtKill);
  });
});
