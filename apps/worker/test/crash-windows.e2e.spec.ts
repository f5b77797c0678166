import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CapacityLedger } from '@tally/admission';
import type { AppView, StreamToken, StreamView } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { LivekitEgressClient } from '@tally/livekit';
import { ApiClient, type Child, freePort, startAppProcess, startStack, type TestStack, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../../api/src/bootstrap.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { startWorker } from '../src/bootstrap.js';
import { HoldingProxy, type HoldMode } from './holding-proxy.js';
import { sweepOnce } from './sweep.js';

/**
 * An API process is killed with SIGKILL while its egress start call is in flight, on either side of
 * LiveKit; one sweep of the worker must leave nothing `starting` and no egress running unreserved.
 */
describe('an API killed between writing a row and hearing back from LiveKit', () => {
  let stack: TestStack;
  let api: NestFastifyApplication;
  let worker: INestApplicationContext;
  let admin: ApiClient;
  let prisma: PrismaClient;
  let redis: Redis;
  let proxy: HoldingProxy;
  let egress: LivekitEgressClient;
  const publishers: Publisher[] = [];
  const victims: Child[] = [];

  beforeAll(async () => {
    stack = await startStack({ egress: true, env: { TALLY_SWEEP_INTERVAL_S: '3600' } });
    api = await startApi(stack.config, { logger: false });
    worker = await startWorker(stack.config, { logger: false });
    admin = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`, stack.adminKey);
    prisma = createPrismaClient(stack.config.databaseUrl);
    redis = new Redis(stack.redis.url);
    proxy = await HoldingProxy.start(stack.config.livekit.url);
    egress = new LivekitEgressClient(stack.config.livekit);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await Promise.all(victims.map((v) => v.stop('SIGKILL')));
    await proxy?.stop();
    redis?.disconnect();
    await prisma?.$disconnect();
    await worker?.close();
    await api?.close();
    await stack?.stop();
  });

  async function publishingStream(): Promise<{ app: AppView; stream: StreamView }> {
    const app = (await admin.post<AppView>('/v1/apps', { name: 'crashy' })).body;
    const stream = (await admin.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'live' })).body;
    const token = (await admin.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'cam', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token));
    await waitFor('published tracks', async () =>
      (await admin.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.publishers === 1 ? true : undefined,
    );
    return { app, stream };
  }

  /** A second API process whose LiveKit calls go through the proxy; killed once its egress start call is held. */
  async function killedDuring(mode: HoldMode, path: string, body: unknown): Promise<void> {
    proxy.mode = mode;
    const port = await freePort();
    const victim = await startAppProcess(
      'api',
      { ...stack.env, TALLY_PORT: String(port), LIVEKIT_URL: proxy.url },
      join(tmpdir(), `tally-victim-api-${port}.log`),
    );
    victims.push(victim);
    const held = proxy.held();
    const call = new ApiClient(`http://127.0.0.1:${port}`, stack.adminKey).post(path, body);
    const first = await Promise.race([held.then(() => 'held' as const), call.then((r) => r)]);
    if (first !== 'held')
      throw new Error(`the API answered before its egress call was held: ${first.status} ${JSON.stringify(first.body)}`);
    await victim.stop('SIGKILL');
    await call.catch(() => undefined);
  }

  /** What a user would see: no session or recording stuck starting, and nothing running without a reservation. */
  async function settledAfterOneSweep(roomName: string, ids: readonly string[]): Promise<void> {
    // Old enough to judge: the worker leaves work younger than a minute to its creator.
    await prisma.hlsSession.updateMany({ where: { id: { in: [...ids] } }, data: { createdAt: new Date(Date.now() - 120_000) } });
    await prisma.recording.updateMany({ where: { id: { in: [...ids] } }, data: { createdAt: new Date(Date.now() - 120_000) } });
    await sweepOnce(admin, stack.redis.url);
    const ledger = new CapacityLedger(redis);
    // `starting` with an egress is on its way (live once egress reports); without one it would be stuck.
    expect(await prisma.hlsSession.count({ where: { id: { in: [...ids] }, status: 'starting', egressId: null } })).toBe(0);
    expect(await prisma.recording.count({ where: { id: { in: [...ids] }, status: 'starting', egressId: null } })).toBe(0);
    for (const running of await egress.list({ activeOnly: true, room: roomName })) {
      const owner = ids.find((id) => running.requestedPath?.includes(id));
      expect(owner, `egress ${running.egressId} belongs to none of ${ids.join(', ')}`).toBeDefined();
      expect((await ledger.held(owner!))?.confirmed, `the reservation of ${owner}`).toBe(true);
    }
  }

  it('fails an HLS session or recording whose egress LiveKit never saw, releasing its reservation', async () => {
    const { app, stream } = await publishingStream();
    await killedDuring('before-livekit', `/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
    await killedDuring('before-livekit', `/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'track_composite' });
    const hls = await prisma.hlsSession.findFirstOrThrow({ where: { streamId: stream.id } });
    const recording = await prisma.recording.findFirstOrThrow({ where: { streamId: stream.id } });
    expect([hls.status, recording.status]).toEqual(['starting', 'starting']);

    await settledAfterOneSweep(stream.room, [hls.id, recording.id]);

    expect(await prisma.hlsSession.findUniqueOrThrow({ where: { id: hls.id } })).toMatchObject({ status: 'failed' });
    expect(await prisma.recording.findUniqueOrThrow({ where: { id: recording.id } })).toMatchObject({ status: 'failed' });
    const ledger = new CapacityLedger(redis);
    expect(await ledger.held(hls.id)).toBeUndefined();
    expect(await ledger.held(recording.id)).toBeUndefined();
  }, 240_000);

  it('adopts an HLS egress LiveKit started for a killed API, and holds its reservation', async () => {
    const { app, stream } = await publishingStream();
    await killedDuring('after-livekit', `/v1/apps/${app.id}/streams/${stream.id}/hls`, {});
    const hls = await prisma.hlsSession.findFirstOrThrow({ where: { streamId: stream.id } });
    expect(hls.egressId).toBeNull();

    await settledAfterOneSweep(stream.room, [hls.id]);

    const adopted = await prisma.hlsSession.findUniqueOrThrow({ where: { id: hls.id } });
    expect(adopted.egressId).not.toBeNull();
    expect((await new CapacityLedger(redis).held(hls.id))?.confirmed).toBe(true);
  }, 240_000);
});
