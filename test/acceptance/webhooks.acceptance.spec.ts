import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { AppView, StreamView, WebhookDeliveryList, WebhookEndpointView, WebhookSecretView } from '@tally/contracts';
import { waitFor } from '@tally/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStream, createTenant, type Installed, installed, type Tenant } from './installed.js';

type ErrorBody = { error: { message: string; details?: { fields?: { field: string }[] } } };
type Arrival = Readonly<{ raw: string; headers: IncomingHttpHeaders }>;

/** An app's endpoint on this host that answers every request with `status` and keeps what arrived. */
async function endpointAnswering(status: () => number): Promise<{ url: string; arrivals: Arrival[]; stop: () => Promise<void> }> {
  const arrivals: Arrival[] = [];
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      arrivals.push({ raw: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      response.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An endpoint that accepts connections, reads the requests and never answers. */
async function blackHole(): Promise<{ url: string; open: () => number; stop: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    open: () => sockets.filter((s) => !s.destroyed).length,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const subscribe = async (tenant: Tenant, url: string, gracePeriodS?: number): Promise<string> => {
  const rotated = await tenant.client.post<WebhookSecretView>(
    `/v1/apps/${tenant.app.id}/webhook-secret`,
    gracePeriodS === undefined ? undefined : { gracePeriodS },
  );
  expect(rotated.status).toBe(201);
  expect((await tenant.client.patch<AppView>(`/v1/apps/${tenant.app.id}`, { webhookUrl: url })).status).toBe(200);
  return rotated.body.secret;
};

/** Ends a new stream: one `stream.ended` event for the app. */
const endNewStream = async (tenant: Tenant, name: string): Promise<StreamView> => {
  const stream = await createStream(tenant, name);
  expect((await tenant.client.delete(`/v1/apps/${tenant.app.id}/streams/${stream.id}`)).status).toBe(200);
  return stream;
};

const eventOf = (arrival: Arrival) => JSON.parse(arrival.raw) as { id: string; type: string; data: { id: string } };

describe('an installed node: outbound webhooks', () => {
  let node: Installed;
  const tenants: Tenant[] = [];
  const stops: (() => Promise<void>)[] = [];
  const tenant = async (name: string) => {
    const created = await createTenant(node.admin, name);
    tenants.push(created);
    return created;
  };

  beforeAll(() => {
    node = installed();
  });

  afterAll(async () => {
    for (const t of tenants) await node.admin.delete(`/v1/apps/${t.app.id}`);
    await Promise.all(stops.map((stop) => stop()));
  });

  it('refuses webhook URLs into the private networks in every spelling, naming webhookUrl', async () => {
    // The install allows loopback for these tests (TALLY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8); nothing else.
    const app = await tenant('acceptance ssrf');
    const refused = [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://0x0a000001/',
      'http://167772161/',
      'http://[::1]:7880/',
      'http://[::ffff:10.0.0.1]/',
      'http://100.64.0.1/',
      'http://[fd00::1]/',
      `http://${node.nodeIp}:7880/`,
    ];
    for (const url of refused) {
      const answer = await app.client.patch<ErrorBody>(`/v1/apps/${app.app.id}`, { webhookUrl: url });
      expect(answer.status, url).toBe(400);
      expect(answer.body.error.details?.fields, url).toEqual([expect.objectContaining({ field: 'webhookUrl' })]);
    }
    expect((await app.client.get<AppView>(`/v1/apps/${app.app.id}`)).body.webhookUrl).toBeNull();
  });

  it('signs with both secrets during a rotation; the published standardwebhooks library verifies each', async () => {
    const app = await tenant('acceptance rotation');
    const endpoint = await endpointAnswering(() => 204);
    stops.push(endpoint.stop);
    const first = await subscribe(app, endpoint.url);
    const second = await subscribe(app, endpoint.url, 3_600);
    const stream = await endNewStream(app, 'rotated');
    const arrival = await waitFor('the stream.ended delivery', () =>
      Promise.resolve(endpoint.arrivals.find((a) => eventOf(a).data.id === stream.id)),
    );
    expect(String(arrival.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [first, second]) {
      expect(new Webhook(secret).verify(arrival.raw, arrival.headers as Record<string, string>)).toMatchObject({ type: 'stream.ended' });
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(arrival.raw, arrival.headers as Record<string, string>),
    ).toThrow();
  });

  it("delivers another app's event within 2 s while one app's endpoint hangs with deliveries piled up", async () => {
    const hole = await blackHole();
    stops.push(hole.stop);
    const stalled = await tenant('acceptance stalled');
    await subscribe(stalled, hole.url);
    // More events than the app may have in flight (TALLY_WEBHOOK_APP_CONCURRENCY, 16 by default).
    for (let i = 0; i < 40; i += 1) await endNewStream(stalled, `pile ${i}`);
    await waitFor('the stalled app filling its slots', () => Promise.resolve(hole.open() >= 16 ? true : undefined), 30_000);

    const healthy = await tenant('acceptance healthy');
    const endpoint = await endpointAnswering(() => 200);
    stops.push(endpoint.stop);
    const secret = await subscribe(healthy, endpoint.url);
    const stream = await endNewStream(healthy, 'prompt');
    const arrival = await waitFor(
      'the healthy app’s event',
      () => Promise.resolve(endpoint.arrivals.find((a) => eventOf(a).data.id === stream.id)),
      2_000,
    );
    expect(new Webhook(secret).verify(arrival.raw, arrival.headers as Record<string, string>)).toMatchObject({ type: 'stream.ended' });
    expect(hole.open()).toBeLessThanOrEqual(16);
    const pending = await stalled.client.get<WebhookDeliveryList>(`/v1/apps/${stalled.app.id}/webhook-deliveries?limit=100`);
    expect(pending.body.items.length).toBe(40);
    expect(pending.body.items.every((d) => d.status === 'pending')).toBe(true);
  });

  it('410 Gone disables the endpoint at once; re-enabled by the app, a redelivery arrives', async () => {
    const app = await tenant('acceptance gone');
    let status = 410;
    const endpoint = await endpointAnswering(() => status);
    stops.push(endpoint.stop);
    const secret = await subscribe(app, endpoint.url);
    const endpointView = async () => (await app.client.get<WebhookEndpointView>(`/v1/apps/${app.app.id}/webhook-endpoint`)).body;

    const stream = await endNewStream(app, 'gone');
    const disabled = await waitFor('the endpoint disabled', async () => {
      const view = await endpointView();
      return view.status === 'disabled' ? view : undefined;
    });
    expect(disabled).toMatchObject({ disabledReason: 'gone', url: endpoint.url });
    const [dead] = await waitFor('the delivery dead', async () => {
      const items = (await app.client.get<WebhookDeliveryList>(`/v1/apps/${app.app.id}/webhook-deliveries`)).body.items;
      return items[0]?.status === 'dead' ? items : undefined;
    });
    expect(dead).toMatchObject({ lastStatusCode: 410, attempts: 1 });

    status = 200;
    const enabled = await app.client.post<WebhookEndpointView>(`/v1/apps/${app.app.id}/webhook-endpoint/enable`);
    expect(enabled.body).toMatchObject({ status: 'enabled', disabledReason: null });
    expect((await app.client.post(`/v1/apps/${app.app.id}/webhook-deliveries/${dead!.id}/redeliver`)).status).toBe(202);
    const redelivered = await waitFor('the redelivery', () =>
      Promise.resolve(endpoint.arrivals.filter((a) => eventOf(a).data.id === stream.id)[1]),
    );
    expect(new Webhook(secret).verify(redelivered.raw, redelivered.headers as Record<string, string>)).toMatchObject({
      type: 'stream.ended',
    });
  });
});
