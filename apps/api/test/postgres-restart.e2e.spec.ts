import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMigrations } from '@tally/db';
import pg from 'pg';
import type { AppView, RecordingView, StreamToken, StreamView, WebhookDeliveryList } from '@tally/contracts';
import {
  ApiClient,
  type Child,
  createDatabase,
  startAppProcess,
  startPostgres,
  startStack,
  TEMPLATE_DATABASE,
  type TestStack,
  type ThrowawayPostgres,
  waitFor,
} from '@tally/testing';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStream, createTenant } from './api-harness.js';
import { recordingIn } from './recording-client.js';
import { SignedReceiver } from './signed-receiver.js';

const log = (name: string) => join(tmpdir(), `tally-pg-restart-${name}-${process.pid}-${Date.now()}.log`);
const alive = (child: Child) => child.process.exitCode === null && child.process.signalCode === null;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Answer = Readonly<{ route: string; status: number; body: unknown }>;

/**
 * PostgreSQL of its own (a restart must not touch the other test files' server), the API and the
 * worker as installed processes, a real publisher and a passthrough recording on egress.
 */
describe('PostgreSQL restarting under the API and the worker', () => {
  let postgres: ThrowawayPostgres;
  let stack: TestStack;
  let api: Child;
  let worker: Child;
  let receiver: SignedReceiver;
  let publisher: Publisher | undefined;

  beforeAll(async () => {
    postgres = await startPostgres({ durableCommits: true });
    await runMigrations(await createDatabase(postgres.url, TEMPLATE_DATABASE));
    stack = await startStack({
      postgresUrl: postgres.url,
      egress: true,
      env: { TALLY_WEBHOOK_BACKOFF_MS: '300', TALLY_SWEEP_INTERVAL_S: '2' },
    });
    api = await startAppProcess('api', stack.env, log('api'));
    worker = await startAppProcess('worker', stack.env, log('worker'));
    receiver = await SignedReceiver.start();
  }, 240_000);

  afterAll(async () => {
    await publisher?.stop();
    await worker?.stop();
    await api?.stop();
    await receiver?.stop();
    await stack?.stop();
    await postgres?.stop();
  });

  it(
    'answers 503 naming PostgreSQL when it is too slow (stalled, or a row held past a transaction time limit), never 500, losing nothing',
    { timeout: 180_000 },
    async () => {
      const admin = new ApiClient(`http://127.0.0.1:${stack.env['TALLY_PORT']}`, stack.adminKey);
      const { app, client } = await createTenant(admin, 'through a database stall', { maxStreams: 3 });
      const streams = `/v1/apps/${app.id}/streams`;
      const ending = await createStream(client, app.id, 'ending during the stall');
      const kept = await createStream(client, app.id, 'kept through the stall');
      const during: Answer[] = [];
      const ask = async (route: string, call: () => Promise<{ status: number; body: unknown }>) => {
        const answer = await call();
        during.push({ route, status: answer.status, body: answer.body });
      };

      // Every server process stopped, as a stalled disk would: an app's calls, a new round every
      // second, each left to finish on its own, more at once than the API's connection pool holds.
      await postgres.freeze();
      const calls: Promise<void>[] = [];
      try {
        for (let round = 0; round < 6; round += 1) {
          calls.push(ask('DELETE stream', () => client.delete(`${streams}/${ending.id}`)));
          for (let i = 0; i < 3; i += 1) calls.push(ask('GET stream', () => client.get(`${streams}/${kept.id}`)));
          calls.push(ask('POST token', () => client.post(`${streams}/${kept.id}/tokens`, { identity: `viewer-${round}`, role: 'viewer' })));
          await sleep(1_000);
        }
      } finally {
        await postgres.thaw();
      }
      await Promise.all(calls);

      // Another session holds the kept stream's row (a process stopped mid-transaction) for longer
      // than a transaction may take: ending that stream cannot commit meanwhile.
      const holder = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM "Stream" WHERE id = $1 FOR UPDATE', [kept.id]);
        const held = ask('DELETE held stream', () => client.delete(`${streams}/${kept.id}`));
        await sleep(8_000);
        await holder.query('ROLLBACK');
        await held;
      } finally {
        await holder.end();
      }
      const statuses = [...new Set(during.map((a) => `${a.route} ${a.status}`))];
      console.log(`[pg-stall] answers while PostgreSQL was too slow: ${statuses.join(', ')}`);
      expect(during.filter((a) => ![200, 201, 503].includes(a.status))).toEqual([]);
      for (const answer of during.filter((a) => a.status === 503))
        expect(answer.body).toMatchObject({ error: { code: 'upstream_unavailable', details: { service: 'postgres' } } });

      // Asked again once it answers, both streams end; the quota of three then fits exactly three new
      // streams (no reservation leaked or lost).
      for (const stream of [ending, kept]) {
        expect((await client.delete(`${streams}/${stream.id}`)).status).toBe(200);
        expect((await client.get<StreamView>(`${streams}/${stream.id}`)).body.status).toBe('ended');
      }
      for (const name of ['after one', 'after two', 'after three']) expect((await client.post(streams, { name })).status).toBe(201);
      expect((await client.post(streams, { name: 'past the quota' })).body).toMatchObject({ error: { resource: 'app.streams' } });
    },
  );

  it('answers 503 naming PostgreSQL while it is down, then serves again with nothing lost', { timeout: 420_000 }, async () => {
    const admin = new ApiClient(`http://127.0.0.1:${stack.env['TALLY_PORT']}`, stack.adminKey);
    const { app, client } = await createTenant(admin, 'through a database restart', { maxStreams: 2 });
    const secret = await client.post<{ secret: string }>(`/v1/apps/${app.id}/webhook-secret`);
    receiver.secret = secret.body.secret;
    expect((await client.patch<AppView>(`/v1/apps/${app.id}`, { webhookUrl: receiver.url })).status).toBe(200);

    const stream = await createStream(client, app.id, 'on air');
    const base = `/v1/apps/${app.id}/streams/${stream.id}`;
    const host = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'host', role: 'publisher' })).body;
    const published = await joinAndPublish(host.url, host.token);
    publisher = published;
    await waitFor(
      'the stream to be live',
      async () => ((await client.get<StreamView>(base)).body.status === 'live' ? true : undefined),
      60_000,
    );
    const started = await client.post<RecordingView>(`${base}/recordings`, { mode: 'passthrough' });
    expect(started.status).toBe(201);
    await recordingIn(client, app.id, started.body.id, ['active']);
    const recordingStartedAt = Date.now();

    await postgres.crash();
    const downAt = Date.now();
    // What an app does while the database is down: reads, writes, token mints, the health check.
    const during: Answer[] = [];
    let leftAt: number | undefined;
    while (Date.now() - downAt < 12_000) {
      // The publisher leaves while the database is down: the recording's end reaches Tally then.
      if (leftAt === undefined && Date.now() - downAt > 4_000) {
        leftAt = Date.now();
        await published.stop();
        publisher = undefined;
      }
      for (const [route, call] of [
        ['GET stream', () => client.get(base)],
        ['GET recordings', () => client.get(`/v1/apps/${app.id}/recordings`)],
        ['POST stream', () => client.post(`/v1/apps/${app.id}/streams`, { name: 'during the outage' })],
        ['POST token', () => client.post(`${base}/tokens`, { identity: 'late', role: 'viewer' })],
        ['GET healthz', () => admin.get('/healthz')],
      ] as const) {
        const answer = await call();
        during.push({ route, status: answer.status, body: answer.body });
      }
      await sleep(500);
    }
    const statuses = [...new Set(during.map((a) => `${a.route} ${a.status}`))];
    console.log(`[pg-restart] answers while PostgreSQL was down: ${statuses.join(', ')}`);
    expect(during.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    const refused = during.filter((a) => a.status === 503 && a.route !== 'GET healthz');
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused)
      expect(answer.body).toMatchObject({ error: { code: 'upstream_unavailable', details: { service: 'postgres' } } });
    expect(during.find((a) => a.route === 'GET healthz')?.body).toMatchObject({ status: 'degraded' });

    await postgres.start();
    const upAt = Date.now();
    await waitFor(
      'the API to serve from PostgreSQL again',
      async () => ((await client.get(base)).status === 200 ? true : undefined),
      60_000,
    );
    console.log(
      `[pg-restart] down ${((upAt - downAt) / 1000).toFixed(1)} s; API serving ${((Date.now() - upAt) / 1000).toFixed(1)} s after PostgreSQL started`,
    );
    expect(alive(api)).toBe(true);
    expect(alive(worker)).toBe(true);

    // Once it is back, no request fails.
    const after = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => (i % 2 === 0 ? client.get(base) : client.get(`/v1/apps/${app.id}/recordings`))),
    );
    expect(after.map((a) => a.status)).toEqual(after.map(() => 200));

    // The stream's reservation outlived the outage and the creates refused during it left none behind:
    // the quota of two fits exactly one more stream.
    const second = await client.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'second' });
    expect(second.status).toBe(201);
    const third = await client.post(`/v1/apps/${app.id}/streams`, { name: 'third' });
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ error: { resource: 'app.streams' } });
    expect((await client.delete(`/v1/apps/${app.id}/streams/${second.body.id}`)).status).toBe(200);

    // The recording ended with its publisher during the outage, and completes with all of it.
    const complete = await recordingIn(client, app.id, started.body.id, ['complete', 'failed']);
    expect(complete).toMatchObject({ status: 'complete', error: null });
    const wall = ((leftAt ?? 0) - recordingStartedAt) / 1000;
    console.log(`[pg-restart] recording ${complete.durationS ?? 0} s of the ${wall.toFixed(1)} s between active and the publisher leaving`);
    // The file starts when egress wrote its first frame, just before `active`, and ends when the publisher left.
    expect(complete.durationS ?? 0).toBeGreaterThan(wall - 2);
    expect((await client.delete(base)).status).toBe(200);

    // No reservation leaked: the quota of two fits two new streams once both ended.
    for (const name of ['after', 'after again']) expect((await client.post(`/v1/apps/${app.id}/streams`, { name })).status).toBe(201);

    // Every webhook event was delivered, once per event id, with a valid signature.
    const deliveries = await waitFor(
      'every webhook delivered',
      async () => {
        const items = (await client.get<WebhookDeliveryList>(`/v1/apps/${app.id}/webhook-deliveries`)).body.items;
        const last = ['recording.completed', 'stream.ended'].every((type) => items.some((d) => d.eventType === type));
        return last && items.every((d) => d.status === 'delivered') ? items : undefined;
      },
      120_000,
    );
    const received = receiver.events.map((e) => e.body.id);
    expect(new Set(received)).toEqual(new Set(deliveries.map((d) => d.eventId)));
    expect(receiver.events.every((e) => e.signatureValid)).toBe(true);
    expect(receiver.events.map((e) => e.body.type)).toEqual(
      expect.arrayContaining(['stream.live', 'recording.started', 'stream.ended', 'recording.completed']),
    );
  });
});
