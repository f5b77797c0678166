import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppView, CameraToken, CreatedApiKey, CreatedCamera } from '@tally/contracts';
import { runMigrations } from '@tally/db';
import { generateJpegs } from '@tally/testing/camera';
import {
  ApiClient,
  type Child,
  createDatabase,
  freePort,
  startAppProcess,
  startLivekit,
  startPostgres,
  startRedis,
  TEST_NODE_BUDGET,
  waitFor,
} from '@tally/testing';
import { WebSocket } from 'ws';

export type TallyCamera = Readonly<{ pid: number; mjpegUrl: string; frameBytes: number; stop(): Promise<void> }>;

const FPS = 8;

/** The API as its own process on a throwaway Postgres / Redis / livekit-server, one camera sending QVGA 8 fps JPEGs. */
export async function startTallyCamera(): Promise<TallyCamera> {
  const postgres = await startPostgres();
  const databaseUrl = await createDatabase(postgres.url, 'tally_fanout');
  await runMigrations(databaseUrl);
  const redis = await startRedis();
  const port = await freePort();
  const livekit = await startLivekit({ redisUrl: redis.url, nodeIp: '127.0.0.1', webhookUrl: `http://127.0.0.1:${port}/webhooks/livekit` });
  const adminKey = `admin-${'x'.repeat(32)}`;
  const env = {
    TALLY_HOME: '/nonexistent',
    TALLY_HOST: '127.0.0.1',
    TALLY_PORT: String(port),
    TALLY_ADMIN_KEY: adminKey,
    TALLY_LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    LIVEKIT_URL: livekit.url,
    LIVEKIT_PUBLIC_URL: livekit.wsUrl,
    LIVEKIT_API_KEY: livekit.apiKey,
    LIVEKIT_API_SECRET: livekit.apiSecret,
  };
  const children: Child[] = [];
  children.push(
    await startAppProcess('agent', { ...env, ...TEST_NODE_BUDGET, TALLY_NODE_ID: 'fanout', TALLY_HEARTBEAT_INTERVAL_S: '1' }, log('agent')),
  );
  const api = await startAppProcess('api', env, log('api'));
  children.push(api);
  const admin = new ApiClient(`http://127.0.0.1:${port}`, adminKey);
  await waitFor('the node heartbeat', async () =>
    (await admin.get<{ items: unknown[] }>('/v1/nodes')).body.items.length > 0 ? true : undefined,
  );

  const app = (await admin.post<AppView>('/v1/apps', { name: 'fanout' })).body;
  await admin.patch(`/v1/apps/${app.id}`, { quotas: { maxCameraViewers: 100_000 } });
  const key = (await admin.post<CreatedApiKey>(`/v1/apps/${app.id}/keys`)).body.key;
  const client = admin.withKey(key);
  const frames = await generateJpegs(FPS * 4);
  const maxFrameKb = Math.ceil(Math.max(...frames.map((f) => f.length)) / 1024);
  const camera = (await client.post<CreatedCamera>(`/v1/apps/${app.id}/cameras`, { name: 'bench', maxFps: FPS, maxFrameKb })).body;
  const token = (await client.post<CameraToken>(`/v1/apps/${app.id}/cameras/${camera.id}/tokens`, { ttlS: 86_400 })).body;

  const ws = new WebSocket(camera.ingestUrl, { headers: { authorization: `Bearer ${camera.key}` } });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let i = 0;
  const timer = setInterval(() => ws.send(frames[i++ % frames.length]!), 1000 / FPS);

  return {
    pid: api.process.pid ?? 0,
    mjpegUrl: `${token.mjpegUrl}?token=${encodeURIComponent(token.token)}`,
    frameBytes: frames.reduce((s, f) => s + f.length, 0) / frames.length,
    async stop() {
      clearInterval(timer);
      ws.close();
      for (const child of children.reverse()) await child.stop();
      await livekit.stop();
      await redis.stop();
      await postgres.stop();
    },
  };
}

function log(name: string): string {
  return join(tmpdir(), `tally-fanout-${name}-${process.pid}.log`);
}
