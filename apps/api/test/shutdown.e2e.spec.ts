import { createServer, type IncomingMessage, type Server, request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppView, WebhookDeliveryList, WebhookSecretView } from '@tally/contracts';
import { ApiClient, type Child, startAppProcess, startStack, type TestStack, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStream, createTenant } from './api-harness.js';

const log = (name: string) => join(tmpdir(), `tally-shutdown-${name}-${process.pid}-${Date.now()}.log`);
const exited = (child: Child) =>
  new Promise<void>((resolve) => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) resolve();
    else child.process.once('exit', () => resolve());
  });

type Outcome = { status: number } | { error: string };

/** One request over a caller-owned keep-alive connection, as a load balancer or SDK sends them. */
function send(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ outcome: Outcome; body?: string }> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          resolve({ outcome: { status }, ...(status === 201 ? { body: Buffer.concat(chunks).toString('utf8') } : {}) });
        });
        res.on('error', (error) => resolve({ outcome: { error: `response aborted: ${error.message}` } }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ outcome: { error: error.code ?? error.message } }));
    req.end(payload);
  });
}

/** An app's webhook endpoint that takes its time to answer 200. */
class SlowReceiver {
  readonly eventIds = new Set<string>();
  inFlight = 0;
  private readonly server: Server = createServer((request, response) => {
    this.inFlight += 1;
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      setTimeout(() => {
        this.eventIds.add((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id);
        this.inFlight -= 1;
        response.writeHead(200).end();
      }, 2_000);
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('clean shutdown on SIGTERM', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ env: { TALLY_WEBHOOK_BACKOFF_MS: '300', TALLY_SWEEP_INTERVAL_S: '2' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('the API answers every request it accepted (no 5xx) while it stops, then exits', { timeout: 120_000 }, async () => {
    const api = await startAppProcess('api', stack.env, log('api'));
    try {
      const base = new URL(`http://127.0.0.1:${stack.env['TALLY_PORT']}`);
      const admin = new ApiClient(base.origin, stack.adminKey);
      const { app, key } = await createTenant(admin, 'under load', { maxStreams: 100_000 });
      const outcomes: Outcome[] = [];
      let stopping = false;
      let answeredAfterSigterm = 0;
      // Each client creates and ends streams (ledger in Redis, rows in Postgres, rooms in LiveKit) on its own connection.
      const client = async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        while (true) {
          const created = await send(agent, base, 'POST', `/v1/apps/${app.id}/streams`, key.key, { name: 'load' });
          outcomes.push(created.outcome);
          if (stopping && 'status' in created.outcome) answeredAfterSigterm += 1;
          if (created.body === undefined) break;
          const { id } = JSON.parse(created.body) as { id: string };
          const ended = await send(agent, base, 'DELETE', `/v1/apps/${app.id}/streams/${id}`, key.key);
          outcomes.push(ended.outcome);
          if ('error' in ended.outcome || ended.outcome.status === 503) break;
        }
        agent.destroy();
      };
      const clients = Array.from({ length: 20 }, () => client());
      await waitFor('load on the API', () => Promise.resolve(outcomes.length >= 200 ? true : undefined), 60_000);

      stopping = true;
      api.process.kill('SIGTERM');
      await Promise.all(clients);
      await exited(api);

      const answered = outcomes.filter((o): o is { status: number } => 'status' in o);
      // 503: Fastify refusing a request that arrived on an open connection after close began (not accepted);
      // connection errors: requests the closed listener never accepted. Everything else must have succeeded.
      const failed = answered.filter((o) => o.status >= 500 && o.status !== 503);
      expect(failed).toEqual([]);
      expect(answered.filter((o) => o.status === 201 || o.status === 200).length).toBeGreaterThanOrEqual(200);
      expect(answeredAfterSigterm).toBeGreaterThan(0);
      const connectionErrors = outcomes.flatMap((o) => ('error' in o ? [o.error] : []));
      expect(connectionErrors.filter((e) => !['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(e))).toEqual([]);
    } finally {
      await api.stop();
    }
  });

  it('the worker finishes the webhook delivery it holds on SIGTERM; the rest wait for the next worker', { timeout: 120_000 }, async () => {
    const api = await startAppProcess('api', stack.env, log('api2'));
    const receiver = new SlowReceiver();
    const url = await receiver.start();
    let worker = await startAppProcess('worker', stack.env, log('worker'));
    try {
      const admin = new ApiClient(`http://127.0.0.1:${stack.env['TALLY_PORT']}`, stack.adminKey);
      const { app, client } = await createTenant(admin, 'hooks', { maxStreams: 5 });
      expect((await client.post<WebhookSecretView>(`/v1/apps/${app.id}/webhook-secret`)).status).toBe(201);
      expect((await client.patch<AppView>(`/v1/apps/${app.id}`, { webhookUrl: url })).status).toBe(200);
      for (let i = 0; i < 3; i += 1) {
        const stream = await createStream(client, app.id, `s${i}`);
        expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBe(200);
      }
      await waitFor('a delivery in flight at the receiver', () => Promise.resolve(receiver.inFlight > 0 ? true : undefined), 30_000);

      worker.process.kill('SIGTERM');
      await exited(worker);

      // What the worker held when told to stop was delivered (answered after 2 s) before it exited.
      const deliveries = async () => (await client.get<WebhookDeliveryList>(`/v1/apps/${app.id}/webhook-deliveries`)).body.items;
      const afterStop = await deliveries();
      expect(receiver.eventIds.size).toBeGreaterThan(0);
      for (const id of receiver.eventIds) expect(afterStop.find((d) => d.eventId === id)?.status).toBe('delivered');
      expect(afterStop.filter((d) => d.status !== 'delivered' && d.status !== 'pending')).toEqual([]);

      // The next worker delivers the rest: nothing was lost.
      worker = await startAppProcess('worker', stack.env, log('worker2'));
      const all = await waitFor(
        'every delivery delivered',
        async () => {
          const items = await deliveries();
          return items.length > 0 && items.every((d) => d.status === 'delivered') ? items : undefined;
        },
        60_000,
      );
      expect(new Set(all.map((d) => d.eventId))).toEqual(receiver.eventIds);
    } finally {
      await worker.stop();
      await api.stop();
      await receiver.stop();
    }
  });
});
