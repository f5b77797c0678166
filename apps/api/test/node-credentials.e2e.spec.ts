import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import { TrackKind } from '@livekit/rtc-node';
import {
  type ClusterSettings,
  type ErrorBody,
  JOBS,
  type JoinedNodeRole,
  type JoinTokenView,
  newId,
  type NodeHeartbeat,
  type NodeList,
  nodeReportQueueOf,
  type StreamToken,
  type WorkerExitReport,
} from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { NodeRegistry } from '@tally/nodes';
import { type Child, startAppProcess, startEgress, startLivekit, TEST_NODE_BUDGET, type TestLivekit, waitFor } from '@tally/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { AccessToken, DirectFileOutput, EgressClient, EgressStatus, RoomServiceClient, TrackType } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

const REPLICATION_PASSWORD = randomBytes(16).toString('hex');
const SENTINEL_PASSWORD = randomBytes(16).toString('hex');

/** Each joined node's own Redis user and LiveKit key (docs/adr/0025): what they may do, and that removal revokes them at once. */
describe('joined nodes credentials', () => {
  let sut: ApiHarness;
  let admin: Redis;
  let redisPort = '';
  const clients: Redis[] = [];
  const children: Child[] = [];
  let nodeLivekit: TestLivekit | undefined;

  beforeAll(async () => {
    // Joined nodes are handed this address; the test reaches the same Redis on the stack's port.
    // Recordings go to a bucket (the origin's address for its own services, the cluster address for nodes).
    sut = await startApiHarness({
      TALLY_CLUSTER_REDIS_URL: 'redis://10.9.0.1:6379',
      TALLY_S3_BUCKET: 'tally-recordings',
      TALLY_S3_ENDPOINT: 'http://10.9.0.2:7070',
      TALLY_S3_ACCESS_KEY: 'tally-origin',
      TALLY_S3_SECRET_KEY: 'scoped-secret',
      TALLY_CLUSTER_S3_ENDPOINT: 'http://10.9.0.1:7070',
      // The origin's Sentinel and the users replicas are handed (install.sh --redis-sentinel).
      TALLY_CLUSTER_REDIS_SENTINELS: '10.9.0.1:26379',
      TALLY_CLUSTER_REDIS_REPLICATION_PASSWORD: REPLICATION_PASSWORD,
      TALLY_CLUSTER_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
    });
    redisPort = new URL(sut.stack.env['REDIS_URL'] ?? '').port;
    admin = new Redis(sut.stack.env['REDIS_URL'] ?? '', { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    for (const c of children) await c.stop();
    await nodeLivekit?.stop();
    admin?.disconnect();
    await sut?.stop();
  });

  const name = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;
  const tokenFor = async (role: JoinedNodeRole, nodeName: string) => {
    const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { role, name: nodeName });
    expect(created.status).toBe(201);
    return created.body.token;
  };
  const join = (token: string, role: JoinedNodeRole, nodeName: string) =>
    sut.anonymous.post<ClusterSettings & ErrorBody>('/v1/nodes/join', { token, role, name: nodeName });
  /** The handed-out URL, pointed at the stack's Redis (same server, the test's address). */
  const local = (handed: string) => {
    const url = new URL(handed);
    url.hostname = '127.0.0.1';
    url.port = redisPort;
    return url.toString();
  };
  const joined = async (role: JoinedNodeRole, nodeName: string) => {
    const answer = await join(await tokenFor(role, nodeName), role, nodeName);
    expect(answer.status).toBe(200);
    return {
      ...answer.body,
      localRedisUrl: local(answer.body.redisUrl),
      password: decodeURIComponent(new URL(answer.body.redisUrl).password),
    };
  };
  const connect = (url: string) => {
    const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  const authenticates = async (url: string) => {
    const client = connect(url);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  };
  /** ACL LOG entries (denied commands, keys, channels) of one user. */
  const deniedFor = async (user: string) => {
    const log = (await admin.call('ACL', 'LOG', '128')) as unknown[][];
    return log
      .map((entry) => Object.fromEntries(Array.from({ length: entry.length / 2 }, (_, i) => [String(entry[2 * i]), entry[2 * i + 1]])))
      .filter((entry) => entry['username'] === user)
      .map((entry) => `${String(entry['reason'])} ${String(entry['object'])}`);
  };
  /** The HTTP status livekit-server's Twirp API answers a ListRooms call signed with this key. */
  const twirpStatus = async (apiKey: string, apiSecret: string) => {
    const token = new AccessToken(apiKey, apiSecret, { ttl: 60 });
    token.addGrant({ roomList: true });
    const response = await fetch(`${sut.stack.livekit.url}/twirp/livekit.RoomService/ListRooms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token.toJwt()}`, 'content-type': 'application/json' },
      body: '{}',
    });
    return response.status;
  };
  /** Waits until livekit-server refuses the key (it caches each key it looked up for 3 s); logs how long that took. */
  const refusedWithin = async (what: string, apiKey: string, apiSecret: string) => {
    const start = Date.now();
    await waitFor(what, async () => ((await twirpStatus(apiKey, apiSecret)) === 401 ? true : undefined), 30_000);
    console.log(`${what}: refused after ${Date.now() - start} ms`);
  };
  const listed = async (nodeId: string) => (await sut.admin.get<NodeList>('/v1/nodes')).body.items.some((n) => n.nodeId === nodeId);
  const refusal = (response: { body: unknown }) => JSON.stringify((response.body as ErrorBody).error);

  it('worker and gpu nodes are handed the bucket, its scoped key and the cluster address of the store; media nodes none', async () => {
    const bucket = {
      endpoint: 'http://10.9.0.1:7070',
      bucket: 'tally-recordings',
      region: 'us-east-1',
      forcePathStyle: true,
      accessKeyId: 'tally-origin',
      secretAccessKey: 'scoped-secret',
    };
    expect((await joined('worker', name('s3-worker'))).objectStore).toEqual(bucket);
    expect((await joined('gpu', name('s3-gpu'))).objectStore).toEqual(bucket);
    expect((await joined('media', name('s3-media'))).objectStore).toBeNull();
  });

  it("a --redis-replica token hands over the replication settings and the servers' users; no other join gets them", async () => {
    const plain = await joined('media', name('no-replica'));
    expect(plain.redisSentinel).toEqual({ name: 'tally', addresses: ['10.9.0.1:26379'] });
    expect(plain.redisReplica).toBeNull();

    const nodeName = name('replica');
    const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { role: 'media', name: nodeName, redisReplica: true });
    expect(created.status).toBe(201);
    expect(created.body.command).toContain('--redis-replica');
    // A join that does not ask for the replica settings, and a plain token asking for them, are refused.
    expect((await join(created.body.token, 'media', nodeName)).status).toBe(401);
    const plainToken = await tokenFor('media', name('asks'));
    expect(
      (await sut.anonymous.post('/v1/nodes/join', { token: plainToken, role: 'media', name: name('asks'), redisReplica: true })).status,
    ).toBe(401);

    const answer = await sut.anonymous.post<ClusterSettings>('/v1/nodes/join', {
      token: created.body.token,
      role: 'media',
      name: nodeName,
      redisReplica: true,
    });
    expect(answer.status).toBe(200);
    const replica = answer.body.redisReplica!;
    expect(replica).toMatchObject({
      primary: '10.9.0.1:6379',
      quorum: 2,
      replicationUser: 'tally-replication',
      replicationPassword: REPLICATION_PASSWORD,
      sentinelUser: 'tally-sentinel',
      sentinelPassword: SENTINEL_PASSWORD,
    });
    // The origin's own users, passwords as hashes only; no joined node's user (the API applies those).
    expect(replica.serverUsers.some((line) => line.startsWith('user default on '))).toBe(true);
    expect(replica.serverUsers.filter((line) => line.includes('tally-node-'))).toEqual([]);
    expect(replica.serverUsers.join('\n')).not.toMatch(/ >/);
  });

  it('a join token joins only the role and name it was made for, and a wrong token learns nothing about names', async () => {
    const nodeName = name('bound');
    const token = await tokenFor('worker', nodeName);
    const unknown = await join(`tjt_${randomBytes(32).toString('base64url')}`, 'worker', nodeName);
    expect(unknown.status).toBe(401);

    const otherRole = await join(token, 'media', nodeName);
    const otherName = await join(token, 'worker', name('other'));
    expect([otherRole.status, otherName.status]).toEqual([401, 401]);
    expect(refusal(otherRole)).toBe(refusal(unknown));
    expect(refusal(otherName)).toBe(refusal(unknown));

    // A name in the pool: without its token the answer is the same 401, not a 409 that confirms the name.
    const inPool = name('busy');
    await new NodeRegistry(admin).heartbeat(heartbeatOf(inPool), 30);
    const probe = await join(token, 'worker', inPool);
    expect(probe.status).toBe(401);
    expect(refusal(probe)).toBe(refusal(unknown));

    // The refusals did not spend it: the node it was made for joins, once.
    expect((await join(token, 'worker', nodeName)).status).toBe(200);
    expect((await join(token, 'worker', nodeName)).status).toBe(401);
    expect((await sut.admin.post('/v1/nodes/join-tokens', { role: 'worker' })).status).toBe(400);
  });

  it("a worker node's own Redis user runs its agent and its ladder queue, and nothing administrative or another node's", async () => {
    const nodeName = name('worker');
    const node = await joined('worker', nodeName);
    const user = `tally-node-${nodeName}`;
    expect(new URL(node.redisUrl).username).toBe(user);
    expect(new URL(node.redisUrl).host).toBe('10.9.0.1:6379');

    // The real agent, with nothing but the node's credentials.
    const agent = await startAppProcess(
      'agent',
      {
        ...TEST_NODE_BUDGET,
        REDIS_URL: node.localRedisUrl,
        TALLY_NODE_ID: nodeName,
        TALLY_NODE_ROLE: 'worker',
        TALLY_HEARTBEAT_INTERVAL_S: '1',
      },
      pathJoin(tmpdir(), `tally-agent-${nodeName}.log`),
    );
    children.push(agent);
    await waitFor(`node ${nodeName} listed`, async () => ((await listed(nodeName)) ? true : undefined), 30_000);

    // Its report queue, where the agent sends ladder reports and worker exits, is open to it.
    const reports = new Queue(nodeReportQueueOf(nodeName), { connection: connect(node.localRedisUrl) });
    await reports.waitUntilReady();
    await expect(reports.getJobCounts('wait')).resolves.toBeDefined();
    await reports.close();
    expect(await deniedFor(user)).toEqual([]);

    const redis = connect(node.localRedisUrl);
    await redis.connect();
    const other = name('other');
    await new NodeRegistry(admin).heartbeat(heartbeatOf(other), 600);
    const attempts: Record<string, () => Promise<unknown>> = {
      'CONFIG GET': () => redis.call('CONFIG', 'GET', 'requirepass'),
      FLUSHALL: () => redis.flushall(),
      KEYS: () => redis.keys('*'),
      SCAN: () => redis.scan(0),
      MONITOR: () => redis.call('MONITOR'),
      SAVE: () => redis.call('SAVE'),
      'ACL SETUSER': () => redis.call('ACL', 'SETUSER', user, '+@all'),
      SHUTDOWN: () => redis.call('SHUTDOWN', 'NOSAVE'),
      'CLIENT KILL': () => redis.call('CLIENT', 'KILL', 'TYPE', 'normal'),
      "another node's heartbeat": () => redis.set(`tally:{nodes}:hb:${other}`, '{}'),
      'another node out of the pool': () => redis.srem('tally:{nodes}:index', other),
      "the pool's index": () => redis.del('tally:{nodes}:index'),
      'the capacity pool': () => redis.hset('tally:{cap}:pool', 'ramMb', '0'),
      "an app's limits": () => redis.get('tally:{cap}:policy:app_x'),
      'the recordings queue': () => redis.lpush('bull:tally-recordings:wait', 'x'),
      'the maintenance queue': () => redis.lpush('bull:tally-maintenance:wait', 'x'),
      'the transcodes queue': () => redis.lpush('bull:tally-transcodes:wait', 'x'),
      "another node's report queue": () => redis.lpush(`bull:tally-node-report.${other}:wait`, 'x'),
      "another node's ladder queue": () => redis.lpush(`bull:tally-transcode-node.${other}:wait`, 'x'),
      "another node's wake channel": () => redis.publish(`tally:{nodes}:wake:${other}`, 'egress'),
      'join tokens': () => redis.set('tally:join:x', '1'),
      "another node's status": () => redis.hset('tally:{nodes}:status', other, 'disabled'),
      'its own LiveKit key in the keys hash': () => redis.hget('tally:{lk}:keys', `tally-node-${nodeName}`),
    };
    for (const [what, attempt] of Object.entries(attempts)) {
      await expect(attempt(), what).rejects.toThrow(/NOPERM/);
    }
    expect(await deniedFor(user)).toEqual(
      expect.arrayContaining([
        'key tally:{cap}:pool',
        'command flushall',
        'key tally:{nodes}:index',
        `channel tally:{nodes}:wake:${other}`,
      ]),
    );
    expect(await listed(nodeName)).toBe(true);
    expect(await listed(other)).toBe(true);

    // Stopped, its agent takes the node out of the pool at once with what its user may do.
    const refusedBefore = await deniedFor(user);
    await agent.stop();
    expect(await listed(nodeName)).toBe(false);
    expect(await deniedFor(user)).toEqual(refusedBefore);
  });

  it("a media node's livekit-server runs in the cluster on its own Redis user without a refused command", async () => {
    const nodeName = name('media');
    const node = await joined('media', nodeName);
    // It verifies the tokens the API signs and signs the webhooks the API checks: the cluster's key.
    expect(node.livekit).toMatchObject({ apiKey: sut.stack.livekit.apiKey, apiSecret: sut.stack.livekit.apiSecret });
    nodeLivekit = await startLivekit({ redisUrl: node.localRedisUrl, nodeIp: '127.0.0.1' });
    const room = `app_x.str_${randomBytes(4).toString('hex')}`;
    const onNode = new RoomServiceClient(nodeLivekit.url, nodeLivekit.apiKey, nodeLivekit.apiSecret);
    await onNode.createRoom({ name: room });
    const origin = new RoomServiceClient(sut.stack.livekit.url, sut.stack.livekit.apiKey, sut.stack.livekit.apiSecret);
    expect((await origin.listRooms([room])).map((r) => r.name)).toEqual([room]);
    // A worker node's own key, which the node's livekit-server looks up through its Redis user.
    const worker = await joined('worker', name('keyed'));
    const withWorkerKey = new RoomServiceClient(nodeLivekit.url, worker.livekit.apiKey, worker.livekit.apiSecret);
    expect((await withWorkerKey.listRooms([room])).map((r) => r.name)).toEqual([room]);
    await onNode.deleteRoom(room);
    const user = `tally-node-${nodeName}`;
    expect(await deniedFor(user)).toEqual([]);

    // Its user reads one key at a time, and cannot list or change the hash.
    const redis = connect(node.localRedisUrl);
    await redis.connect();
    expect(await redis.hget('tally:{lk}:keys', worker.livekit.apiKey)).toBe(worker.livekit.apiSecret);
    for (const [what, attempt] of Object.entries({
      HGETALL: () => redis.hgetall('tally:{lk}:keys'),
      HKEYS: () => redis.hkeys('tally:{lk}:keys'),
      HSET: () => redis.hset('tally:{lk}:keys', 'forged', 'secret'),
      HDEL: () => redis.hdel('tally:{lk}:keys', worker.livekit.apiKey),
    })) {
      await expect(attempt(), what).rejects.toThrow(/NOPERM/);
    }
    expect(await admin.hget('tally:{lk}:keys', 'forged')).toBeNull();
  });

  it("a worker node's egress records with its own LiveKit key, on its own Redis user without a refused command", async () => {
    const nodeName = name('egress');
    const node = await joined('worker', nodeName);
    expect(node.livekit.apiKey).toBe(`tally-node-${nodeName}`);
    expect(node.livekit.apiKey).not.toBe(sut.stack.livekit.apiKey);
    expect(node.livekit.apiSecret).not.toBe(sut.stack.livekit.apiSecret);
    // The node's egress holds nothing but its own key: it joins the origin's room with a token it signs.
    const egress = await startEgress({
      livekit: { ...sut.stack.livekit, apiKey: node.livekit.apiKey, apiSecret: node.livekit.apiSecret },
      redisUrl: node.localRedisUrl,
      budget: TEST_NODE_BUDGET,
    });
    children.push(egress);
    const { app, client } = await createTenant(sut.admin, 'node-key');
    const stream = await createStream(client, app.id);
    const token = (
      await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, {
        identity: 'host',
        role: 'publisher',
      })
    ).body;
    let publisher: Publisher | undefined;
    try {
      publisher = await joinAndPublish(token.url, token.token, { video: false });
      await tracksUp(client, app.id, stream.id, [TrackKind.KIND_AUDIO]);
      const origin = new RoomServiceClient(sut.stack.livekit.url, sut.stack.livekit.apiKey, sut.stack.livekit.apiSecret);
      const [room] = (await origin.listRooms()).filter((r) => r.name.includes(stream.id));
      const participants = await origin.listParticipants(room!.name);
      const audio = participants.flatMap((p) => p.tracks).find((t) => t.type === TrackType.AUDIO);
      // LiveKit hands the request to the node's egress over Redis (psrpc).
      const file = pathJoin(tmpdir(), `node-key-${nodeName}.ogg`);
      const egresses = new EgressClient(sut.stack.livekit.url, sut.stack.livekit.apiKey, sut.stack.livekit.apiSecret);
      const info = await egresses.startTrackEgress(room!.name, new DirectFileOutput({ filepath: file }), audio!.sid);
      const statusOf = async () => (await egresses.listEgress({ egressId: info.egressId }))[0]?.status;
      await waitFor(
        'the egress recording',
        async () => {
          const status = await statusOf();
          return status === EgressStatus.EGRESS_ACTIVE || (status ?? 0) > EgressStatus.EGRESS_ACTIVE ? status : undefined;
        },
        120_000,
      );
      expect(await statusOf()).toBe(EgressStatus.EGRESS_ACTIVE);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await egresses.stopEgress(info.egressId);
      const ended = await waitFor(
        'the egress to end',
        async () => {
          const status = await statusOf();
          return status !== undefined && status > EgressStatus.EGRESS_ENDING ? status : undefined;
        },
        120_000,
      );
      expect(ended).toBe(EgressStatus.EGRESS_COMPLETE);
      expect(existsSync(file) && statSync(file).size).toBeGreaterThan(0);
    } finally {
      await publisher?.stop();
    }
    expect(await deniedFor(`tally-node-${nodeName}`)).toEqual([]);
  });

  it("removing a worker node revokes its LiveKit key: livekit-server refuses it, the cluster's key still works; a re-join replaces it", async () => {
    const nodeName = name('lk-removed');
    const node = await joined('worker', nodeName);
    expect(await twirpStatus(node.livekit.apiKey, node.livekit.apiSecret)).toBe(200);
    expect(await twirpStatus(node.livekit.apiKey, sut.stack.livekit.apiSecret)).toBe(401);

    const rejoined = await joined('worker', nodeName);
    expect(rejoined.livekit.apiKey).toBe(node.livekit.apiKey);
    expect(rejoined.livekit.apiSecret).not.toBe(node.livekit.apiSecret);
    await refusedWithin('the secret a re-join replaced', node.livekit.apiKey, node.livekit.apiSecret);
    expect(await twirpStatus(rejoined.livekit.apiKey, rejoined.livekit.apiSecret)).toBe(200);

    expect((await sut.admin.delete(`/v1/nodes/${nodeName}`)).status).toBe(204);
    await refusedWithin("a removed node's key", rejoined.livekit.apiKey, rejoined.livekit.apiSecret);
    expect(await admin.hget('tally:{lk}:keys', rejoined.livekit.apiKey)).toBeNull();
    expect(await twirpStatus(sut.stack.livekit.apiKey, sut.stack.livekit.apiSecret)).toBe(200);
  });

  it('a node reports only on its own queue: the shared queues refuse it, and a report naming another node changes nothing', async () => {
    const nodeName = name('reporter');
    const node = await joined('worker', nodeName);
    const victim = name('victim');
    const registry = new NodeRegistry(admin);
    await registry.heartbeat(heartbeatOf(nodeName), 600);
    await registry.heartbeat(heartbeatOf(victim), 600);
    const prisma = createPrismaClient(sut.stack.config.databaseUrl);
    const worker = await startAppProcess('worker', sut.stack.env, pathJoin(tmpdir(), `tally-worker-${nodeName}.log`));
    children.push(worker);
    try {
      // The victim's recording: being written, and its ladder running.
      const { app, client } = await createTenant(sut.admin, 'reports');
      const stream = await createStream(client, app.id);
      const seeded = (status: 'active' | 'complete', ladder: boolean) =>
        prisma.recording.create({
          data: {
            id: newId('rec'),
            appId: app.id,
            streamId: stream.id,
            mode: 'track_composite',
            status,
            reason: 'seeded',
            nodeId: victim,
            storage: 'local',
            location: `${app.id}/seeded.mp4`,
            ...(ladder ? { ladderStatus: 'running', ladderEncoder: 'x264', ladderNodeId: victim, ladderAttempt: 1 } : {}),
          },
        });
      const writing = await seeded('active', false);
      const laddered = await seeded('complete', true);
      const exit = (nodeId: string): WorkerExitReport => ({
        nodeId,
        kind: 'egress',
        workerId: 'forged',
        reason: 'forged exit',
        at: new Date(Date.now() + 60_000).toISOString(),
      });

      const redis = connect(node.localRedisUrl);
      for (const shared of ['tally-maintenance', 'tally-transcodes']) {
        const queue = new Queue(shared, { connection: redis });
        await expect(queue.add(JOBS.workerExited.name, exit(victim)), shared).rejects.toThrow(/NOPERM/);
        await queue.close();
      }

      const own = new Queue(nodeReportQueueOf(nodeName), { connection: connect(node.localRedisUrl) });
      const jobs = [
        await own.add(JOBS.workerExited.name, exit(victim)),
        await own.add(JOBS.reportLadder.name, { outcome: 'failed', recordingId: laddered.id, attempt: 1, nodeId: victim, error: 'forged' }),
        // Naming itself: accepted, and about a ladder that is not its own, ignored.
        await own.add(JOBS.reportLadder.name, {
          outcome: 'failed',
          recordingId: laddered.id,
          attempt: 1,
          nodeId: nodeName,
          error: 'forged',
        }),
        // Its own exit, as its agent reports them: runs.
        await own.add(JOBS.workerExited.name, exit(nodeName)),
      ];
      const settled = await waitFor(
        'the reports to be handled',
        async () => {
          const states = await Promise.all(jobs.map(async (job) => (await own.getJob(job.id ?? ''))?.getState()));
          return states.every((s) => s === 'completed' || s === 'failed') ? states : undefined;
        },
        60_000,
      );
      expect(settled).toEqual(['failed', 'failed', 'completed', 'completed']);
      const refused = await own.getJob(jobs[0]?.id ?? '');
      expect(refused?.failedReason).toBe(`a report on node ${nodeName}'s queue names node ${victim}`);
      expect((await own.getJob(jobs[3]?.id ?? ''))?.returnvalue).toEqual({ recordingsFailed: 0 });
      await own.close();

      const after = await prisma.recording.findMany({ where: { id: { in: [writing.id, laddered.id] } } });
      expect(after.map((r) => r.error ?? '')).not.toContainEqual(expect.stringContaining('forged'));
      expect(after.find((r) => r.id === laddered.id)).toMatchObject({ ladderStatus: 'running', ladderError: null });
      const denied = await deniedFor(`tally-node-${nodeName}`);
      for (const shared of ['tally-maintenance', 'tally-transcodes'])
        expect(
          denied.some((d) => d.startsWith(`key bull:${shared}:`)),
          shared,
        ).toBe(true);
    } finally {
      await prisma.$disconnect();
    }
  });

  it('removing a node revokes its Redis user at once: its agent is cut off and its password no longer authenticates', async () => {
    const nodeName = name('removed');
    const node = await joined('gpu', nodeName);
    const agent = await startAppProcess(
      'agent',
      {
        ...TEST_NODE_BUDGET,
        REDIS_URL: node.localRedisUrl,
        TALLY_NODE_ID: nodeName,
        TALLY_NODE_ROLE: 'gpu',
        TALLY_HEARTBEAT_INTERVAL_S: '1',
      },
      pathJoin(tmpdir(), `tally-agent-${nodeName}.log`),
    );
    children.push(agent);
    await waitFor(`node ${nodeName} listed`, async () => ((await listed(nodeName)) ? true : undefined), 30_000);
    const open = connect(node.localRedisUrl);
    await open.connect();
    const closed = new Promise<void>((resolve) => open.once('end', () => resolve()));

    expect((await sut.anonymous.delete(`/v1/nodes/${nodeName}`)).status).toBe(401);
    expect((await sut.admin.delete(`/v1/nodes/${nodeName}`)).status).toBe(204);
    await closed;
    expect(await authenticates(node.localRedisUrl)).toBe(false);
    expect(await listed(nodeName)).toBe(false);
    // Its agent keeps trying and never comes back.
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await listed(nodeName)).toBe(false);
    }
    expect((await sut.admin.delete(`/v1/nodes/${nodeName}`)).status).toBe(404);
  });

  it('a node leaving with its own password is set draining, then removed and revoked; another password is refused', async () => {
    const nodeName = name('leaving');
    const node = await joined('worker', nodeName);
    const other = await joined('worker', name('bystander'));
    const status = () => admin.hget('tally:{nodes}:status', nodeName);
    expect((await sut.anonymous.withKey(other.password).post(`/v1/nodes/${nodeName}/drain`)).status).toBe(401);
    expect(await status()).toBeNull();
    const drained = await sut.anonymous.withKey(node.password).post(`/v1/nodes/${nodeName}/drain`);
    expect([drained.status, drained.body]).toEqual([200, { running: [] }]);
    expect(await status()).toBe('draining');
    expect(await authenticates(node.localRedisUrl)).toBe(true);

    expect((await sut.anonymous.withKey(other.password).post(`/v1/nodes/${nodeName}/leave`)).status).toBe(401);
    expect((await sut.anonymous.post(`/v1/nodes/${nodeName}/leave`)).status).toBe(401);
    expect(await authenticates(node.localRedisUrl)).toBe(true);

    expect((await sut.anonymous.withKey(node.password).post(`/v1/nodes/${nodeName}/leave`)).status).toBe(204);
    expect(await authenticates(node.localRedisUrl)).toBe(false);
    expect(await status()).toBeNull();
    expect(await authenticates(other.localRedisUrl)).toBe(true);
  });

  it('node users come back when Redis loses them (a restarted Redis): the API re-creates them from Postgres on reconnecting', async () => {
    const node = await joined('worker', name('kept'));
    const user = decodeURIComponent(new URL(node.redisUrl).username);
    await admin.call('ACL', 'DELUSER', user);
    expect(await authenticates(node.localRedisUrl)).toBe(false);
    // Every other connection dropped, as a Redis restart would: the API reconnects.
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor(`${user} re-created`, async () => ((await authenticates(node.localRedisUrl)) ? true : undefined), 15_000);
  });

  it('a node user Redis holds without a row (revoked while this server was a replica) is deleted when the API reconnects', async () => {
    const kept = await joined('worker', name('kept'));
    const stale = name('revoked');
    const password = randomBytes(16).toString('hex');
    // What a former primary promoted again holds: a user the API deleted elsewhere while it was away.
    await admin.call('ACL', 'SETUSER', `tally-node-${stale}`, 'on', `>${password}`, '~*', '+@all');
    // A user the installer writes, which is not the API's to delete.
    await admin.call('ACL', 'SETUSER', 'tally-replication', 'on', `>${password}`, '+psync', '+replconf', '+ping');
    const staleUrl = `redis://tally-node-${stale}:${password}@127.0.0.1:${redisPort}`;
    expect(await authenticates(staleUrl)).toBe(true);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor(`tally-node-${stale} deleted`, async () => ((await authenticates(staleUrl)) ? undefined : true), 15_000);
    expect(await authenticates(kept.localRedisUrl)).toBe(true);
    expect(await admin.call('ACL', 'USERS')).toEqual(expect.arrayContaining(['tally-replication']));
  });
});

function heartbeatOf(nodeId: string): NodeHeartbeat {
  const now = new Date().toISOString();
  return {
    nodeId,
    role: 'worker',
    budget: { cpuMillicores: 1000, ramMb: 1024, nicMbps: 100, gpus: [] },
    used: { cpuMillicores: 0, ramMb: 0 },
    labels: {},
    version: 'test',
    startedAt: now,
    sentAt: now,
  };
}
