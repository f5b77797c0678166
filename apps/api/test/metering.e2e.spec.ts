import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dispose } from '@livekit/rtc-node';
import type { AllAppsMeteringView, AppMeteringView, StreamToken, StreamView } from '@tally/contracts';
import { type Child, mediaNodeIp, startAppProcess, waitFor } from '@tally/testing';
import { newWebhookSecret } from '@tally/webhooks';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { sendParticipantEvent } from './livekit-webhook-sender.js';
import { joinAndPublish, joinAsViewer, type Publisher, type Viewer } from '@tally/testing/media';

const HOUR_MS = 3_600_000;
const floorHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;
const minutes = (ms: number): number => ms / 60_000;

/** Within 2 % of what the test's own clock measured. */
function expectNear(actual: number, expected: number): void {
  expect(Math.abs(actual - expected), `${actual} vs ${expected} minutes`).toBeLessThanOrEqual(expected * 0.02);
}

/**
 * What the test's clock brackets: a participant was in the room at least from the moment its join
 * completed to the moment its leave began, at most from the moment its join began to the moment the
 * API was seen to have applied its leave. Billed within 2 % of that bracket.
 */
function expectBracketed(actual: number, at: { joining: number; joined: number; leaving: number; left: number }): void {
  const shortest = minutes(at.leaving - at.joined);
  const longest = minutes(at.left - at.joining);
  expect(actual, `${actual} minutes, between ${shortest} and ${longest}`).toBeGreaterThanOrEqual(shortest * 0.98);
  expect(actual, `${actual} minutes, between ${shortest} and ${longest}`).toBeLessThanOrEqual(longest * 1.02);
}

type UsageEvent = { id: string; type: string; subject: string; specversion: string; data: { start: string; value: number; role?: string } };

/** The operator's usage endpoint: keeps each batch with whether its Standard Webhooks signature verified. */
async function startUsageReceiver(
  secret: string,
): Promise<{ server: Server; url: string; batches: { valid: boolean; events: UsageEvent[] }[] }> {
  const batches: { valid: boolean; events: UsageEvent[] }[] = [];
  const verifies = (raw: string, headers: IncomingHttpHeaders): boolean => {
    try {
      new Webhook(secret).verify(raw, headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      batches.push({ valid: verifies(raw, request.headers), events: JSON.parse(raw) as UsageEvent[] });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/usage`, batches };
}

describe('usage metering', () => {
  let sut: ApiHarness;
  let worker: Child | undefined;
  let publisher: Publisher | undefined;
  let viewer: Viewer | undefined;
  const exportSecret = newWebhookSecret();
  let usageReceiver: Awaited<ReturnType<typeof startUsageReceiver>>;
  const startWorker = async (): Promise<Child> =>
    startAppProcess('worker', sut.stack.env, join(tmpdir(), `tally-worker-metering-${Date.now()}.log`));

  beforeAll(async () => {
    mediaNodeIp();
    usageReceiver = await startUsageReceiver(exportSecret);
    sut = await startApiHarness({
      TALLY_METERING_SYNC_INTERVAL_S: '1',
      TALLY_USAGE_EXPORT_URL: usageReceiver.url,
      TALLY_USAGE_EXPORT_SECRET: exportSecret,
    });
    worker = await startWorker();
  }, 180_000);

  afterAll(async () => {
    await publisher?.stop();
    await viewer?.room.disconnect().catch(() => undefined);
    await worker?.stop();
    await sut?.stop();
    await new Promise((resolve) => usageReceiver?.server.close(resolve));
    await dispose();
  });

  it('counts each interval once whatever the order and duplication of its webhooks', async () => {
    const { app, client } = await createTenant(sut.admin, 'replayed');
    const stream = await createStream(client, app.id, 'replayed');
    const room = `${app.id}.${stream.id}`;
    const h = floorHour(Date.now()) - 3 * HOUR_MS;
    const joinedAt = new Date(h + 50 * 60_000);
    const leftAt = new Date(h + HOUR_MS + 15 * 60_000);
    const viewerJoinedAt = new Date(h + 55 * 60_000);
    const viewerLeftAt = new Date(h + 58 * 60_000);
    const host = { room, sid: 'PA_host0001', identity: 'host', canPublish: true, joinedAt };
    const fan = { room, sid: 'PA_fan00001', identity: 'fan', canPublish: false, joinedAt: viewerJoinedAt };
    const send = async (e: Parameters<typeof sendParticipantEvent>[2]) =>
      expect(await sendParticipantEvent(sut.anonymous.baseUrl, sut.stack.config.livekit, e)).toBe(200);

    // The leave before the join, each twice, one duplicate under a new event id, and a late abort.
    await send({ ...host, id: 'EV_left1', event: 'participant_left', createdAt: leftAt });
    await send({ ...fan, id: 'EV_fanleft', event: 'participant_left', createdAt: viewerLeftAt });
    await send({ ...host, id: 'EV_join1', event: 'participant_joined', createdAt: joinedAt });
    await send({ ...host, id: 'EV_left1', event: 'participant_left', createdAt: leftAt });
    await send({ ...host, id: 'EV_join2', event: 'participant_joined', createdAt: joinedAt });
    await send({ ...fan, id: 'EV_fanjoin', event: 'participant_joined', createdAt: viewerJoinedAt });
    await send({ ...host, id: 'EV_abort', event: 'participant_connection_aborted', createdAt: new Date(leftAt.getTime() + 600_000) });

    const path = `/v1/apps/${app.id}/metering?from=${new Date(h).toISOString()}&to=${new Date(h + 3 * HOUR_MS).toISOString()}&granularity=hour`;
    const read = async () => (await client.get<AppMeteringView>(path)).body;
    const first = await read();
    // A leave's time is its whole second; received after that second (as these are), its middle.
    const halfSecond = 0.5 / 60;
    expect(first.publisherMinutes).toBeCloseTo(25 + halfSecond, 6);
    expect(first.subscriberMinutes).toBeCloseTo(3 + halfSecond, 6);
    expect(first.buckets.map((b) => b.usage.publisherMinutes.toFixed(4))).toEqual(['10.0000', (15 + halfSecond).toFixed(4), '0.0000']);
    // The roll-up of those closed hours (the worker sweeps every second) gives the same bill.
    await sleep(2_500);
    expect(await read()).toEqual(first);

    // The closed hours went to the operator's endpoint as signed CloudEvents, one per app, meter and role.
    const exported = await waitFor('the hours to be exported', () => {
      const events = usageReceiver.batches
        .flatMap((b) => b.events)
        .filter((e) => e.subject === app.id && e.type === 'tally.usage.participant_minutes');
      return Promise.resolve(events.length >= 3 ? events : undefined);
    });
    expect(usageReceiver.batches.every((b) => b.valid)).toBe(true);
    expect(exported.every((e) => e.specversion === '1.0')).toBe(true);
    const publisherByHour = exported.filter((e) => e.data.role === 'publisher').map((e) => [e.data.start, e.data.value]);
    expect(publisherByHour).toEqual([
      [new Date(h).toISOString(), 10],
      [new Date(h + HOUR_MS).toISOString(), expect.closeTo(15 + halfSecond, 6)],
    ]);
  });

  it('bills a real publisher, viewer and stream within 2 % of the test clock, across a worker killed mid-stream', async () => {
    const { app, client } = await createTenant(sut.admin, 'metered');
    const stream = await createStream(client, app.id, 'billed');
    const base = `/v1/apps/${app.id}/streams/${stream.id}`;
    const pubToken = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'host', role: 'publisher' })).body;
    const viewToken = (await client.post<StreamToken>(`${base}/tokens`, { identity: 'fan', role: 'viewer' })).body;
    const from = new Date(floorHour(Date.now())).toISOString();
    const to = new Date(floorHour(Date.now()) + 3 * HOUR_MS).toISOString();
    const usage = async (): Promise<AppMeteringView> =>
      (await client.get<AppMeteringView>(`/v1/apps/${app.id}/metering?from=${from}&to=${to}&granularity=hour`)).body;

    const publisherJoining = Date.now();
    publisher = await joinAndPublish(pubToken.url, pubToken.token);
    const publisherJoined = Date.now();
    await waitFor('the stream to be live', async () => ((await client.get<StreamView>(base)).body.status === 'live' ? true : undefined));
    await sleep(5_000);
    const viewerJoining = Date.now();
    viewer = await joinAsViewer(viewToken.url, viewToken.token);
    await viewer.tracks;
    const viewerJoined = Date.now();
    await waitFor('the worker to meter the live stream', async () => ((await usage()).streamMinutes > 0 ? true : undefined));

    await worker?.stop('SIGKILL');
    worker = undefined;
    await sleep(8_000);
    worker = await startWorker();
    await sleep(Math.max(0, publisherJoining + 30_000 - Date.now()));

    const viewerLeaving = Date.now();
    await viewer.room.disconnect();
    viewer = undefined;
    const publisherLeaving = Date.now();
    await publisher.stop();
    publisher = undefined;
    await waitFor('both leaves to be applied', async () =>
      (await client.get<StreamView>(base)).body.participants === 0 ? true : undefined,
    );
    const roomEmpty = Date.now();
    expect((await client.delete<StreamView>(base)).body.status).toBe('ended');

    const streamMinutes = minutes(roomEmpty - publisherJoining);
    // LiveKit's leave webhooks may come after the room is empty: until they do, the open intervals
    // still count up to each read, so the bill is final once two reads in a row agree.
    // The first of the two agreeing reads answered after both leaves were applied: the latest a leave can be billed at.
    let previous = { minutes: -1, answeredAt: 0 };
    let leavesAppliedBy = 0;
    const billed = await waitFor(
      'the leaves and the ended stream to be metered',
      async () => {
        const u = await usage();
        const settled = u.participantMinutes === previous.minutes && Math.abs(u.streamMinutes - streamMinutes) <= streamMinutes * 0.02;
        if (settled) leavesAppliedBy = previous.answeredAt;
        previous = { minutes: u.participantMinutes, answeredAt: Date.now() };
        return settled ? u : undefined;
      },
      30_000,
    );
    expectBracketed(billed.publisherMinutes, {
      joining: publisherJoining,
      joined: publisherJoined,
      leaving: publisherLeaving,
      left: leavesAppliedBy,
    });
    expectBracketed(billed.subscriberMinutes, {
      joining: viewerJoining,
      joined: viewerJoined,
      leaving: viewerLeaving,
      left: leavesAppliedBy,
    });
    expect(billed.participantMinutes).toBeCloseTo(billed.publisherMinutes + billed.subscriberMinutes, 9);
    expect(billed.recordingMinutes).toEqual({ room_composite: 0, track_composite: 0, track: 0, passthrough: 0 });
    expect(billed.buckets).toHaveLength(3);
    const bucketed = billed.buckets.reduce((sum, b) => sum + b.usage.participantMinutes, 0);
    expect(bucketed).toBeCloseTo(billed.participantMinutes, 6);
    // Ended intervals stop counting: a later read, after more sweeps and roll-ups, bills the same.
    await sleep(2_500);
    expect((await usage()).participantMinutes).toBeCloseTo(billed.participantMinutes, 6);

    const csv = await client.raw(`/v1/apps/${app.id}/metering?from=${from}&to=${to}&granularity=hour`, { accept: 'text/csv' });
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const [header, ...rows] = (await csv.text()).trim().split('\n');
    const columns = header!.split(',');
    expect(columns.slice(0, 4)).toEqual(['app_id', 'start', 'end', 'participant_minutes']);
    expect(rows).toHaveLength(3);
    const csvMinutes = rows.map((r) => Number(r.split(',')[3])).reduce((a, b) => a + b, 0);
    expect(csvMinutes).toBeCloseTo(billed.participantMinutes, 4);

    const metrics = await (await sut.anonymous.raw('/metrics')).text();
    const counter = new RegExp(`^tally_usage_participant_minutes_total\\{app="${app.id}",role="publisher"\\} (\\S+)$`, 'm').exec(metrics);
    expectNear(Number(counter?.[1]), billed.publisherMinutes);

    const all = await sut.admin.get<AllAppsMeteringView>(`/v1/metering?from=${from}&to=${to}`);
    expect(all.status).toBe(200);
    expect(all.body.apps.find((a) => a.appId === app.id)?.participantMinutes).toBeCloseTo(billed.participantMinutes, 4);
    expect(all.body.participantMinutes).toBeGreaterThanOrEqual(billed.participantMinutes - 1e-6);
  });

  it('answers only the app itself and the admin, and names the field a bad query got wrong', async () => {
    const { app, client } = await createTenant(sut.admin, 'private');
    const other = await createTenant(sut.admin, 'nosy');
    const range = 'from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z';

    expect((await client.get(`/v1/apps/${app.id}/metering?${range}`)).status).toBe(200);
    expect((await sut.admin.get(`/v1/apps/${app.id}/metering?${range}`)).status).toBe(200);
    expect((await other.client.get(`/v1/apps/${app.id}/metering?${range}`)).status).toBe(404);
    expect((await client.get(`/v1/metering?${range}`)).status).toBe(403);
    const bad = async (query: string) =>
      await client.get<{ error: { details: { fields: { field: string }[] } } }>(`/v1/apps/${app.id}/metering?${query}`);
    for (const [query, field] of [
      [`${range}&granularity=week`, 'granularity'],
      ['from=yesterday&to=2026-01-02T00:00:00Z', 'from'],
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
      ['from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
      ['to=2026-01-02T00:00:00Z', 'from'],
    ] as const) {
      const response = await bad(query);
      expect(response.status, query).toBe(400);
      expect(
        response.body.error.details.fields.map((f) => f.field),
        query,
      ).toContain(field);
    }
    const day = (await client.get<AppMeteringView>(`/v1/apps/${app.id}/metering?${range}`)).body;
    expect(day).toMatchObject({ granularity: 'day', participantMinutes: 0, recordingMinutes: { passthrough: 0 } });
    expect(day.buckets).toHaveLength(1);
  });
});
