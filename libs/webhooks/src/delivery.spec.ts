import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from './address-policy.js';
import { type DeliveryRequest, WebhookSender } from './delivery.js';
import { WebhookResolver } from './webhook-resolver.js';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, secretKey } from './signature.js';

type Seen = { headers: IncomingHttpHeaders; body: string; method: string | undefined };

describe(WebhookSender.name, () => {
  const sut = new WebhookSender(new AddressPolicy(['127.0.0.0/8']), new WebhookResolver());
  let server: Server;
  let base: string;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        seen.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), method: request.method });
        const path = request.url ?? '/';
        if (path === '/slow') return void setTimeout(() => response.writeHead(200).end(), 2_000);
        if (path === '/redirect') return void response.writeHead(302, { location: '/ok' }).end();
        response.writeHead(path === '/fail' ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await sut.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const secret = newWebhookSecret();
  const request = (path: string, overrides: Partial<DeliveryRequest> = {}): DeliveryRequest => ({
    appId: 'app_aaaaaaaaaaaaaaaa',
    url: base + path,
    body: '{"id":"evt_aaaaaaaaaaaaaaaa","type":"stream.live"}',
    keys: [secretKey(secret)],
    eventId: 'evt_aaaaaaaaaaaaaaaa',
    eventType: 'stream.live',
    deliveryId: 'dlv_bbbbbbbbbbbbbbbb',
    timeoutMs: 1_000,
    nowS: Math.floor(Date.now() / 1000),
    ...overrides,
  });

  it('POSTs the body with the documented headers, signed so the receiver can verify it', async () => {
    const sent = request('/ok');

    expect(await sut.attempt(sent)).toEqual({ ok: true, statusCode: 204 });
    const got = seen.at(-1)!;
    expect(got.method).toBe('POST');
    expect(got.body).toBe(sent.body);
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Tally-Webhooks/1',
      'webhook-id': sent.eventId,
      'webhook-timestamp': String(sent.nowS),
      'tally-event-type': 'stream.live',
      'tally-delivery-id': sent.deliveryId,
    });
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toEqual(JSON.parse(sent.body));
  });

  it('counts a non-2xx answer as a failure with its status', async () => {
    expect(await sut.attempt(request('/fail'))).toEqual({ ok: false, statusCode: 500, error: 'HTTP 500' });
  });

  it('does not follow redirects', async () => {
    expect(await sut.attempt(request('/redirect'))).toEqual({ ok: false, statusCode: 302, error: 'HTTP 302' });
    expect(seen.filter((s) => s.method === 'POST').length).toBe(seen.length);
  });

  it('refuses loopback unless the operator allowed it, whether spelled as an address or a name', async () => {
    const strict = new WebhookSender(new AddressPolicy(), new WebhookResolver());
    const before = seen.length;
    const port = new URL(base).port;
    try {
      for (const url of [
        base,
        `http://2130706433:${port}/`,
        `http://0x7f.1:${port}/`,
        `http://[::ffff:127.0.0.1]:${port}/`,
        `http://localhost:${port}/`,
      ]) {
        expect(await strict.attempt(request('/', { url })), url).toEqual({ ok: false, statusCode: null, error: 'address not allowed' });
      }
      expect(seen.length).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('connects to a name only through an allowed address', async () => {
    const port = new URL(base).port;

    expect(await sut.attempt(request('/ok', { url: `http://localhost:${port}/ok` }))).toEqual({ ok: true, statusCode: 204 });
  });

  it('gives up after the timeout', async () => {
    const started = Date.now();

    expect(await sut.attempt(request('/slow', { timeoutMs: 200 }))).toEqual({ ok: false, statusCode: null, error: 'timeout' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('reports a refused connection without throwing', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    expect(await sut.attempt(request('/', { url: `http://127.0.0.1:${port}/` }))).toEqual({
      ok: false,
      statusCode: null,
      error: 'connection failed',
    });
  });
});
