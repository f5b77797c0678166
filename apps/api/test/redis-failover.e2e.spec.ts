import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisConnectionOptions } from '@tally/config';
import { type ClusterSettings, type Health, type JoinTokenView, type RecordingView, type StreamView } from '@tally/contracts';
import { ApiClient, type Child, createStream, createTenant, startAppProcess, startStack, type TestStack, waitFor } from '@tally/testing';
import { deliveries, probeRecording, startMediaWorkload } from './failover-workload.js';
import { download, recordingIn } from './recording-client.js';
import { SignedReceiver } from './signed-receiver.js';
import { Redis } from 'ioredis';
import { sweepOnce } from '../../worker/test/sweep.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const log = (name: string) => join(tmpdir(), `tally-redis-failover-${name}-${process.pid}-${Date.now()}.log`);
const seconds = (since: number) => ((performance.now() - since) / 1_000).toFixed(1);

type Refusal = { error: { code: string; resource?: string; limit?: number; used?: number } };
/** 48 retries over about three minutes (the most the schedule takes is 50): the backlog drains within seconds once the endpoint answers. */
const WEBHOOK_RETRIES = [...Array.from({ length: 20 }, () => '1s'), ...Array.from({ length: 28 }, () => '5s')].join(',');
/** The Sentinels' down-after: media that stopped for the outage would leave a gap at least this long in the file. */
const OUTAGE_S = 5;

/**
 * Redis with Sentinel (docs/adr/0040-redis-sentinel.md): a primary, a replica and three Sentinels;
 * livekit-server, the agent, the API and the worker all reach Redis through the Sentinels. The
 * primary is killed with SIGKILL and the platform must go on against the promoted replica.
 */
describe('Redis failover through Sentinel', () => {
  let stack: TestStack;
  let api: Child;
  let worker: Child;
  let anonymous: ApiClient;
  let admin: ApiClient;
  let receiver: SignedReceiver;

  beforeAll(async () => {
    stack = await startStack({ redisSentinel: true, egress: true });
    receiver = await SignedReceiver.start();
    // Nodes may join (they are handed this address; the test reaches the servers on their ports).
    // Nodes are handed one Sentinel by configuration; the API adds the others it discovers.
    const [configuredSentinel] = stack.redisSentinel!.sentinel.addresses;
    api = await startAppProcess(
      'api',
      {
        ...stack.env,
        TALLY_CLUSTER_REDIS_URL: 'redis://10.9.0.1:6379',
        TALLY_CLUSTER_REDIS_SENTINELS: `${configuredSentinel!.host}:${configuredSentinel!.port}`,
      },
      log('api'),
    );
    worker = await startAppProcess('worker', { ...stack.env, TALLY_WEBHOOK_RETRY_SCHEDULE: WEBHOOK_RETRIES }, log('worker'));
    anonymous = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`);
    admin = anonymous.withKey(stack.adminKey);
  });

  afterAll(async () => {
    await receiver?.stop();
    await worker?.stop();
    await api?.stop();
    await stack?.stop();
  });

  /** POST /v1/reconcile, then the worker's sweep job read back from BullMQ (through the Sentinels where there are). */
  const sweepRoundTrip = () => sweepOnce(admin, redisConnectionOptions(stack.config.redis, { maxRetriesPerRequest: null }));

  /** The API's count of the failovers it followed, from GET /metrics as Prometheus scrapes it. */
  async function failoversCounted(): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${stack.config.http.port}/metrics`)).text();
    const line = /^tally_redis_failovers_total (\d+)$/m.exec(text);
    if (!line) throw new Error('tally_redis_failovers_total is not exported');
    return Number(line[1]);
  }

  /** Tally's own user on the server at `port` (each server of the group holds it). */
  function adminOn(port: number): { host: string; port: number; username?: string; password?: string } {
    const url = new URL(stack.redisSentinel!.url);
    return {
      host: '127.0.0.1',
      port,
      ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
      ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    };
  }

  /** Whether `user` signs in with `password` on the server at `port` (primary or replica). */
  async function authenticates(port: number, user: string, password: string): Promise<boolean> {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      username: user,
      password,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }

  it('a node revoked while a server was a replica cannot sign in once that server is primary again', { timeout: 600_000 }, async () => {
    const group = stack.redisSentinel!;
    const nodeName = `revoked-${process.pid}`;
    const token = await admin.post<JoinTokenView>('/v1/nodes/join-tokens', { role: 'worker', name: nodeName });
    expect(token.status).toBe(201);
    const joined = await anonymous.post<ClusterSettings>('/v1/nodes/join', { token: token.body.token, role: 'worker', name: nodeName });
    expect(joined.status).toBe(200);
    // Handed every Sentinel of the group, the configured one first: a node restarting while that one's host is down still finds the others.
    const every = group.sentinel.addresses.map((a) => `${a.host}:${a.port}`);
    expect(joined.body.redisSentinel?.addresses[0]).toBe(every[0]);
    expect([...(joined.body.redisSentinel?.addresses ?? [])].sort()).toEqual([...every].sort());
    const user = decodeURIComponent(new URL(joined.body.redisUrl).username);
    const password = decodeURIComponent(new URL(joined.body.redisUrl).password);
    const first = (await group.primaryPort())!;
    expect(await authenticates(first, user, password)).toBe(true);

    // The replica takes over; the API follows it and creates the node's user there.
    const second = await group.failover();
    await waitFor(
      `${user} on the promoted replica`,
      async () => ((await authenticates(second, user, password)) ? true : undefined),
      120_000,
    );
    // The API follows the promoted server, and the Sentinels make the first one its replica.
    await waitFor('the API to follow the failover', async () => ((await failoversCounted()) >= 1 ? true : undefined), 120_000);
    await waitFor('the first server to follow the second', async () => ((await group.replicaInSync()) ? true : undefined), 120_000);
    // Redis does not replicate users: the API writes the node's on the replica too (now the first
    // server), so a failover back lets the node in at once.
    await waitFor(`${user} on the replica`, async () => ((await authenticates(first, user, password)) ? true : undefined), 30_000);
    // The node leaves while the first server is a replica: its user goes from both.
    expect((await anonymous.withKey(password).post(`/v1/nodes/${nodeName}/leave`)).status).toBe(204);
    expect(await authenticates(second, user, password)).toBe(false);
    expect(await authenticates(first, user, password)).toBe(false);
    // A replica the revocation did not reach (its host away then, or the user back from its
    // redis.conf) holds it again.
    const replica = new Redis({ ...adminOn(first), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    await replica.connect();
    await replica.call('ACL', 'SETUSER', user, 'on', `>${password}`, '+ping');
    replica.disconnect();
    expect(await authenticates(first, user, password)).toBe(true);

    // The first server is primary again: the API, on it or at its next sync of the replicas, deletes the user it kept.
    expect(await group.failover()).toBe(first);
    await waitFor(`${user} gone from the primary`, async () => ((await authenticates(first, user, password)) ? undefined : true), 120_000);
    await waitFor('the replica in sync again', async () => ((await group.replicaInSync()) ? true : undefined), 120_000);
    // The API followed both: each is counted (a connection that met the demoted server on its way counts it again).
    expect(await failoversCounted()).toBeGreaterThanOrEqual(2);
  });

  it('admits streams and keeps media, recordings, webhooks and reservations on the promoted replica', { timeout: 600_000 }, async () => {
    const group = stack.redisSentinel!;
    const tenant = await createTenant(admin, 'failover app', { maxStreams: 2 });
    await createStream(tenant.client, tenant.app.id, 'before the failover');
    const media = await startMediaWorkload(admin, receiver);
    await sweepRoundTrip();
    const failoversBefore = await failoversCounted();

    const killedPort = await group.killPrimary();
    const killed = performance.now();
    // What an app is answered while there is no primary: reads of its usage and checks that reserve
    // nothing, one pair sent every half second whether or not the last has been answered.
    const during = new Map<string, number>();
    const asked: Promise<void>[] = [];
    let slowestMs = 0;
    const note = (key: string, sent: number) => {
      during.set(key, (during.get(key) ?? 0) + 1);
      slowestMs = Math.max(slowestMs, performance.now() - sent);
    };
    const ask = () => {
      const sent = performance.now();
      asked.push(
        tenant.client.get(`/v1/apps/${tenant.app.id}/usage`).then(
          (r) => note(`GET usage ${r.status}`, sent),
          () => note('GET usage no answer', sent),
        ),
      );
      asked.push(
        tenant.client.post(`/v1/apps/${tenant.app.id}/capacity/check`, { kind: 'stream', count: 1 }).then(
          (r) => note(`POST capacity/check ${r.status}`, sent),
          () => note('POST capacity/check no answer', sent),
        ),
      );
    };
    ask();
    const poller = setInterval(ask, 500);

    let promotedPort: number;
    let promotedAfterS: string;
    let healthyAfterS: string;
    try {
      promotedPort = await waitFor(
        'a replica promoted by the Sentinels',
        async () => {
          const port = await group.primaryPort();
          return port !== undefined && port !== killedPort ? port : undefined;
        },
        180_000,
      );
      promotedAfterS = seconds(killed);

      await waitFor(
        'the API healthy on the new primary (its Redis and livekit-server followed)',
        async () => {
          const health = await anonymous.get<Health>('/healthz');
          return health.status === 200 && health.body.status === 'ok' ? true : undefined;
        },
        180_000,
      );
      healthyAfterS = seconds(killed);
    } finally {
      clearInterval(poller);
      await Promise.all(asked);
    }

    // Until the agent's next heartbeat reaches the new primary the pool may be empty: that refusal
    // says so (429 naming node capacity) and holds nothing.
    const refusals: string[] = [];
    const admitted = await waitFor(
      'a stream admitted on the new primary',
      async () => {
        const response = await tenant.client.post<StreamView | Refusal>(`/v1/apps/${tenant.app.id}/streams`, {
          name: 'after the failover',
        });
        if (response.status === 201) return response.body as StreamView;
        const error = (response.body as Refusal).error;
        refusals.push(`${response.status} ${error?.code ?? ''} ${error?.resource ?? ''}`.trim());
        return undefined;
      },
      180_000,
    );
    const admittedAfterS = seconds(killed);
    expect(admitted.name).toBe('after the failover');

    // A node whose agent has not reached the new primary yet (its heartbeat expired while there was
    // none) has not left: a sweep in those moments frees none of its reservations.
    const poolSize = async () => (await admin.get<{ nodes: unknown[] }>('/v1/capacity')).body.nodes.length;
    stack.agent.process.kill('SIGSTOP');
    let laggingAgentSweep: Record<string, Record<string, number>>;
    try {
      await waitFor('the paused agent missing from the pool', async () => ((await poolSize()) === 0 ? true : undefined), 60_000);
      laggingAgentSweep = await sweepRoundTrip();
    } finally {
      stack.agent.process.kill('SIGCONT');
    }
    expect(laggingAgentSweep['streams']?.['reservationsFreed']).toBe(0);
    await waitFor('the agent back in the pool', async () => ((await poolSize()) === 1 ? true : undefined), 60_000);
    expect(refusals.filter((r) => !r.startsWith('429 capacity_exhausted node.'))).toEqual([]);

    // The reservation taken before the failover is on the promoted replica: the quota of two is full.
    const third = await tenant.client.post<Refusal>(`/v1/apps/${tenant.app.id}/streams`, { name: 'one too many' });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams', limit: 2, used: 2 });

    await sweepRoundTrip();
    const queuedAfterS = seconds(killed);
    // The metric an alert (TallyRedisFailover) watches counts this failover, once.
    expect(await failoversCounted()).toBe(failoversBefore + 1);

    // The publisher's media went on: the stream is live with its publisher, the recording active.
    const streamNow = (await media.client.get<StreamView>(`/v1/apps/${media.appId}/streams/${media.stream.id}`)).body;
    expect(streamNow).toMatchObject({ status: 'live', publishers: 1 });
    expect(media.publisher.room.isConnected).toBe(true);
    expect((await media.client.get<RecordingView>(`/v1/apps/${media.appId}/recordings/${media.recording.id}`)).body.status).toBe('active');

    // The app's endpoint is back; the recording is ended through the API and completes.
    receiver.refusing = false;
    const stopAsked = performance.now();
    expect((await media.client.post(`/v1/apps/${media.appId}/recordings/${media.recording.id}/stop`)).status).toBe(200);
    const complete = await recordingIn(media.client, media.appId, media.recording.id, ['complete', 'failed'], 180_000);
    const completeAfterS = seconds(killed);
    expect(complete).toMatchObject({ status: 'complete', error: null });
    const probed = await probeRecording(await download(media.client, media.appId, complete));
    const recordedS = (Date.parse(complete.endedAt ?? '') - Date.parse(complete.startedAt ?? '')) / 1_000;
    const acrossS = (stopAsked - killed) / 1_000;
    expect(probed.codecs).toEqual(['opus', 'vp8']);
    // The file spans the failover: it was started before the kill and stopped after it, and it is as
    // long as the API says it recorded (1.5 s: egress's trailing silence cut, as in passthrough.e2e).
    expect(probed.durationS, `file ${probed.durationS} s, killed ${acrossS.toFixed(1)} s before the stop`).toBeGreaterThan(acrossS);
    expect(Math.abs(probed.durationS - recordedS), `file ${probed.durationS} s, recorded ${recordedS} s`).toBeLessThan(1.5);
    // No hole where the primary was gone: video that stopped for the outage leaves a gap at least as long.
    expect(probed.largestVideoGapS).toBeLessThan(OUTAGE_S);

    // Every event reaches the endpoint exactly once, the ones piled up during the failover included.
    const delivered = await waitFor(
      'every webhook delivered',
      async () => {
        const items = (await deliveries(media.client, media.appId)).items;
        const done = items.every((d) => d.status === 'delivered') && items.some((d) => d.eventType === 'recording.completed');
        return done ? items : undefined;
      },
      180_000,
    );
    const deliveredAfterS = seconds(killed);
    expect(Object.fromEntries(receiver.accepted)).toEqual(Object.fromEntries(delivered.map((d) => [d.eventId, 1])));
    expect(receiver.events.every((e) => e.signatureValid)).toBe(true);
    expect(new Set(delivered.map((d) => d.eventType))).toEqual(
      new Set(['stream.live', 'stream.ended', 'recording.started', 'recording.completed']),
    );

    // The reservation audit finds nothing held for an owner that is gone or finished.
    const audit = await sweepRoundTrip();
    expect(audit['reservations']).toEqual({});
    expect(audit['redis']).toEqual({ dataLost: 0 });

    console.log(
      [
        `[redis failover] primary :${killedPort} killed (SIGKILL); Sentinel down-after 5 s, quorum 2 of 3`,
        `  replica :${promotedPort} promoted after ${promotedAfterS} s`,
        `  API healthy (Redis + livekit-server) after ${healthyAfterS} s`,
        `  stream admitted after ${admittedAfterS} s (refused meanwhile: ${refusals.length === 0 ? 'none' : refusals.join(', ')})`,
        `  reconcile job round trip (API → BullMQ → worker) done after ${queuedAfterS} s; tally_redis_failovers_total ${failoversBefore} → ${failoversBefore + 1}`,
        `  media: stream live, publisher connected; passthrough recording stopped after ${acrossS.toFixed(1)} s, complete after ${completeAfterS} s`,
        `    file ${probed.durationS.toFixed(1)} s (recorded ${recordedS.toFixed(1)} s), largest video gap ${probed.largestVideoGapS.toFixed(2)} s`,
        `  webhooks: ${media.pendingAtStart} pending at the kill; all ${delivered.length} delivered once each after ${deliveredAfterS} s (${receiver.deliveries} requests, refusals included)`,
        `  asked until healthy: ${[...during].map(([k, n]) => `${k} ×${n}`).join(', ')}; slowest answer ${(slowestMs / 1_000).toFixed(1)} s`,
      ].join('\n'),
    );
    // Tally's clients and livekit-server needed nothing from the Sentinels beyond their read-only default user.
    expect(await group.sentinelDenials()).toEqual([]);
    // A dependency that is down is a 503 naming it, never a 500, and the API itself stays up.
    expect([...during.keys()].filter((k) => k.endsWith(' 500') || k.endsWith(' no answer'))).toEqual([]);
  });
});
